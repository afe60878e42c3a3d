package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hazards gives read-after-write, write-after-write and write-after-read
// deps and nothing else.
func TestHazardsDeps(t *testing.T) {
	p := &RankProgram{Rank: 0, Sizes: Sizes{Src: 16, Dst: 32, Scratch: 16}}
	h := NewHazards(p)
	a := h.Copy(At(BufSrc, 0), At(BufDst, 0), 16)      // writes dst[0,16)
	b := h.Recv(1, 0, At(BufDst, 16), 16)              // independent
	c := h.Send(1, 0, At(BufDst, 8), 16, Path{})       // reads dst[8,24): after a and b
	d := h.Recv(1, 1, At(BufScratch, 0), 16)           // independent
	e := h.Reduce(At(BufScratch, 0), At(BufDst, 0), 8) // RAW on d, RAW/WAW on a
	f := h.Recv(1, 2, At(BufDst, 4), 8)                // WAW on a and e, WAR on c and e
	g := h.Send(1, 3, At(BufSrc, 0), 16, Path{}, d)    // extra dep only
	require.Equal(t, []int32{}, append([]int32{}, p.Deps(a)...))
	assert.Empty(t, p.Deps(b))
	assert.Equal(t, []int32{int32(a), int32(b)}, p.Deps(c))
	assert.Empty(t, p.Deps(d))
	assert.Equal(t, []int32{int32(a), int32(d)}, p.Deps(e))
	assert.Equal(t, []int32{int32(a), int32(c), int32(e)}, p.Deps(f))
	assert.Equal(t, []int32{int32(d)}, p.Deps(g))
}
