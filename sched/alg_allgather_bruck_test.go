package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
)

// Bruck (Parallel Rings section II baselines): ceil(log2 P) rounds for any P.
func TestAllgatherBruckVerifies(t *testing.T) {
	verifyGrid(t, coll.Allgather, "bruck", nil,
		func(t *testing.T, g gridCase, plan *Plan, rep *Report) {
			assert.Equal(t, ceilLog2(g.nodes*g.gpus), rep.CriticalTransfers)
			assert.Equal(t, int64(g.nodes*g.gpus-1)*g.bytes*int64(g.nodes*g.gpus), rep.BytesMoved)
		})
}
