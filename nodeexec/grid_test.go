package nodeexec

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/cuda"
)

// A pair's calls up to 128 KiB run on 4 CTAs (measured faster on two
// H200s than the default's 16); from 256 KiB, and on larger teams at
// every size, the default grid.
func TestPairSmallCallsTakeFourCTAs(t *testing.T) {
	pair, four := gridFor(2), gridFor(4)
	for _, bytes := range []int{4 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10} {
		g := pair(bytes)
		assert.Equal(t, min(cuda.DefaultNodeGrid(bytes).Blocks, 4), g.Blocks, "pair, %d bytes", bytes)
		assert.Equal(t, cuda.DefaultNodeGrid(bytes).Threads, g.Threads)
	}
	assert.Equal(t, 4, pair(64<<10).Blocks, "the default would take 16")
	for _, bytes := range []int{128<<10 + 1, 256 << 10, 1 << 20, 64 << 20, 256 << 20} {
		assert.Equal(t, cuda.DefaultNodeGrid(bytes), pair(bytes), "pair, %d bytes", bytes)
	}
	for _, bytes := range []int{16 << 10, 64 << 10, 1 << 20} {
		assert.Equal(t, cuda.DefaultNodeGrid(bytes), four(bytes), "four ranks, %d bytes", bytes)
	}
}
