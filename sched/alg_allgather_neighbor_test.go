package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
)

// Neighbor exchange (Parallel Rings section II baselines): verifies for every even
// rank count of the grid, refuses odd ones, and takes P/2 rounds.
func TestAllgatherNeighborVerifies(t *testing.T) {
	verifyGrid(t, coll.Allgather, "neighbor", func(n int) bool { return n%2 != 0 },
		func(t *testing.T, g gridCase, plan *Plan, rep *Report) {
			assert.Equal(t, g.nodes*g.gpus/2, rep.CriticalTransfers, "rounds on the critical path")
		})
}
