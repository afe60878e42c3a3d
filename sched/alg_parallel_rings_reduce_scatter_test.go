package sched

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// Parallel Rings, section V-A: the parallel_rings reduce-scatter (one ring per
// rail) verifies over nodes 1-16 x GPUs 1-8 and sizes from one element to
// 64 MiB: every output element reduced over every rank exactly once.
func TestParallelRingsReduceScatterVerifies(t *testing.T) {
	for i, c := range sampleGrid() {
		t.Run(fmt.Sprintf("case%d_%dx%d_%dB_d%d_k%d", i, c.nodes, c.gpus, c.bytes, c.dtype, c.chunks), func(t *testing.T) {
			spec := Spec{Collective: coll.ReduceScatter, Algorithm: "parallel_rings", Topo: topo.SweepShape(c.nodes, c.gpus), Bytes: c.bytes, DtypeBytes: c.dtype, Chunks: c.chunks}
			plan, rep := mustVerify(t, spec)
			if c.nodes > 1 {
				assert.Equal(t, c.nodes-1, rep.CriticalInterNode, "inter-node steps on the critical path")
			}
			// Two sets of G+1 block slots at most.
			assert.LessOrEqual(t, plan.Ranks[0].Sizes.Scratch, int64(2*(c.gpus+1))*c.bytes)
		})
	}
}
