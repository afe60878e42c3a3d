package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
)

// Multi-lane, Algorithm 1: ring allreduce verifies and takes 2(P-1) rounds
// whenever every block is non-empty.
func TestAllreduceRingVerifies(t *testing.T) {
	verifyGrid(t, coll.Allreduce, "ring", nil,
		func(t *testing.T, g gridCase, plan *Plan, rep *Report) {
			p := g.nodes * g.gpus
			if g.bytes/int64(g.dtype) >= int64(p) {
				assert.Equal(t, 2*(p-1), rep.CriticalTransfers)
			}
			assert.LessOrEqual(t, rep.MaxScratchBytes, 2*(g.bytes/int64(p)+int64(g.dtype)))
		})
}
