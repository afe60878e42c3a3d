package sched

import "math/bits"

// Destination bitmaps of MultiWrite (MultiWrite): a message carries the set
// of its final destinations instead of a multicast group (see
// multiwrite.go).

// Bitmap is a destination set over ranks (MultiWrite section 4.1): bit r set
// means rank r is a destination.
type Bitmap []uint64

// NewBitmap is an empty set over n ranks.
func NewBitmap(n int) Bitmap { return make(Bitmap, (n+63)/64) }

// Set adds rank r.
func (b Bitmap) Set(r int) { b[r/64] |= 1 << (r % 64) }

// Clear removes rank r.
func (b Bitmap) Clear(r int) { b[r/64] &^= 1 << (r % 64) }

// Has reports whether rank r is in the set.
func (b Bitmap) Has(r int) bool { return r >= 0 && r/64 < len(b) && b[r/64]&(1<<(r%64)) != 0 }

// Count is the number of ranks in the set.
func (b Bitmap) Count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// Ranks lists the set in ascending order.
func (b Bitmap) Ranks() []int { return b.AppendRanks(nil) }

// AppendRanks appends the set in ascending order to out.
func (b Bitmap) AppendRanks(out []int) []int {
	for i, w := range b {
		for w != 0 {
			out = append(out, i*64+bits.TrailingZeros64(w))
			w &= w - 1
		}
	}
	return out
}

// FullBitmap is the set of all n ranks.
func FullBitmap(n int) Bitmap {
	b := NewBitmap(n)
	for r := 0; r < n; r++ {
		b.Set(r)
	}
	return b
}

// BitmapOf is the set of the given ranks over n ranks.
func BitmapOf(n int, ranks ...int) Bitmap {
	b := NewBitmap(n)
	for _, r := range ranks {
		b.Set(r)
	}
	return b
}
