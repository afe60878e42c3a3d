package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
)

// Recursive doubling (Parallel Rings section II baselines): log2 P rounds for a
// power-of-two rank count, an UnsupportedError otherwise.
func TestAllgatherRecursiveDoublingVerifies(t *testing.T) {
	verifyGrid(t, coll.Allgather, "recursive_doubling", func(n int) bool { return !isPow2(n) },
		func(t *testing.T, g gridCase, plan *Plan, rep *Report) {
			assert.Equal(t, ceilLog2(g.nodes*g.gpus), rep.CriticalTransfers)
		})
}
