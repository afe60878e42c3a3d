package devsync

// Part is piece index of parts equal pieces of count elements: offset and
// length in elements. Each piece but the last few is a whole number of
// align elements long (so pieces of a 16-byte aligned range stay 16-byte
// aligned for vector loads); trailing pieces may be short or empty.
// Every rank computes the same split, so block b of every rank agrees on
// which elements are its own.
func Part(count, parts, index, align int) (off, n int) {
	per := ChunkStride(count, parts, align)
	off = min(count, index*per)
	return off, min(count, off+per) - off
}

// ChunkStride is the length of every piece of Part(count, parts, i,
// align) but the trailing ones: the distance between the regions of a
// slot laid out one piece per rank.
func ChunkStride(count, parts, align int) int {
	if align < 1 {
		align = 1
	}
	per := (count + parts - 1) / parts
	return (per + align - 1) / align * align
}

// VecElems is the number of elements of elemSize bytes in one vector load
// (Align bytes), at least 1.
func VecElems(elemSize int) int { return max(1, Align/elemSize) }
