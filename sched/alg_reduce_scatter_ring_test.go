package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
)

// Multi-lane, Algorithm 1, first loop: ring reduce-scatter verifies (every
// element of rank r's block reduced over all ranks exactly once) and takes
// P-1 rounds.
func TestReduceScatterRingVerifies(t *testing.T) {
	verifyGrid(t, coll.ReduceScatter, "ring", nil,
		func(t *testing.T, g gridCase, plan *Plan, rep *Report) {
			p := g.nodes * g.gpus
			assert.Equal(t, p-1, rep.CriticalTransfers)
			assert.Equal(t, int64(p-1)*g.bytes*int64(p), rep.BytesMoved)
		})
}
