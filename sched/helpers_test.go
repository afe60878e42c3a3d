package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// BlockSpan: blocks tile the message, hold whole elements, and differ by at
// most one element.
func TestBlockSpanTilesWholeElements(t *testing.T) {
	for i, c := range []struct {
		n     int64
		parts int
		elem  int
	}{{4, 1, 4}, {4, 3, 4}, {12, 3, 4}, {28, 3, 4}, {1000, 7, 8}, {2, 16, 2}, {64 << 20, 64, 4}, {3, 2, 1}} {
		var off int64
		lo, hi := c.n, int64(0)
		for b := 0; b < c.parts; b++ {
			s := BlockSpan(c.n, c.parts, b, c.elem)
			assert.Equal(t, off, s.Off, "case %d block %d", i, b)
			assert.Zero(t, s.Len%int64(c.elem), "case %d block %d: whole elements", i, b)
			lo, hi = min(lo, s.Len), max(hi, s.Len)
			off = s.End()
		}
		assert.Equal(t, c.n, off, "case %d: blocks cover the message", i)
		assert.LessOrEqual(t, hi-lo, int64(c.elem), "case %d: blocks differ by at most one element", i)
		assert.Equal(t, hi, MaxBlockLen(c.n, c.parts, c.elem), "case %d", i)
	}
}

func TestChunkHelpers(t *testing.T) {
	assert.Equal(t, 0, ChunkCount(0, 4, 4))
	assert.Equal(t, 1, ChunkCount(64, 0, 4))
	assert.Equal(t, 1, ChunkCount(64, 1, 4))
	assert.Equal(t, 3, ChunkCount(12, 4, 4), "fewer elements than chunks: one piece per element")
	assert.Equal(t, 4, ChunkCount(1<<20, 4, 4))
	s := Span{100, 40}
	var got []Span
	for c := 0; c < 3; c++ {
		got = append(got, ChunkSpan(s, 3, c, 4))
	}
	assert.Equal(t, []Span{{100, 16}, {116, 12}, {128, 12}}, got)
	assert.Equal(t, 7*3+2, ChunkTag(7, 2, 3))
}

// Hazards gives read-after-write, write-after-write and write-after-read
// deps and nothing else.
func TestHazardsDeps(t *testing.T) {
	p := &RankProgram{Rank: 0, Sizes: Sizes{Src: 16, Dst: 32, Scratch: 16}}
	h := NewHazards(p.Sizes)
	a := h.Copy(p, At(BufSrc, 0), At(BufDst, 0), 16)      // writes dst[0,16)
	b := h.Recv(p, 1, 0, At(BufDst, 16), 16)              // independent
	c := h.Send(p, 1, 0, At(BufDst, 8), 16, Path{})       // reads dst[8,24): after a and b
	d := h.Recv(p, 1, 1, At(BufScratch, 0), 16)           // independent
	e := h.Reduce(p, At(BufScratch, 0), At(BufDst, 0), 8) // RAW on d, RAW/WAW on a
	f := h.Recv(p, 1, 2, At(BufDst, 4), 8)                // WAW on a and e, WAR on c and e
	g := h.Send(p, 1, 3, At(BufSrc, 0), 16, Path{}, d)    // extra dep only
	require.Equal(t, []int32{}, append([]int32{}, p.Deps(a)...))
	assert.Empty(t, p.Deps(b))
	assert.Equal(t, []int32{int32(a), int32(b)}, p.Deps(c))
	assert.Empty(t, p.Deps(d))
	assert.Equal(t, []int32{int32(a), int32(d)}, p.Deps(e))
	assert.Equal(t, []int32{int32(a), int32(c), int32(e)}, p.Deps(f))
	assert.Equal(t, []int32{int32(d)}, p.Deps(g))
}
