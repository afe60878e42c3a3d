package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
