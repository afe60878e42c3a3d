package devsync

// Part is piece index of parts equal pieces of count elements: offset and
// length in elements. Each piece but the last few is a whole number of
// align elements long (so pieces of a 16-byte aligned range stay 16-byte
// aligned for vector loads); trailing pieces may be short or empty.
// Every rank computes the same split, so block b of every rank agrees on
// which elements are its own.
func Part(count, parts, index, align int) (off, n int) {
	if align < 1 {
		align = 1
	}
	per := (count + parts - 1) / parts
	per = (per + align - 1) / align * align
	off = min(count, index*per)
	return off, min(count, off+per) - off
}

// VecElems is the number of elements of elemSize bytes in one vector load
// (Align bytes), at least 1.
func VecElems(elemSize int) int { return max(1, Align/elemSize) }
