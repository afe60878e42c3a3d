package sched

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// Parallel Rings, section V-A: the parallel_rings allreduce (reduce-scatter then
// allgather, both parallel rings) verifies over nodes 1-16 x GPUs 1-8 and
// vectors from one element (most blocks empty) to 64 MiB, with every
// intra-node variant of the allgather half.
func TestParallelRingsAllreduceVerifies(t *testing.T) {
	for i, c := range sampleGrid() {
		intra := fullMeshIntras[i%len(fullMeshIntras)]
		// Allreduce Bytes is the whole vector: scale the per-rank sizes up.
		bytes := c.bytes
		if bytes < 1<<20 {
			bytes *= int64(c.nodes * c.gpus)
		}
		t.Run(fmt.Sprintf("case%d_%dx%d_%dB_d%d_k%d_%s", i, c.nodes, c.gpus, bytes, c.dtype, c.chunks, intra), func(t *testing.T) {
			spec := Spec{Collective: coll.Allreduce, Algorithm: "parallel_rings", Intra: intra, Topo: topo.SweepShape(c.nodes, c.gpus), Bytes: bytes, DtypeBytes: c.dtype, Chunks: c.chunks}
			_, rep := mustVerify(t, spec)
			if c.nodes > 1 && bytes >= int64(c.nodes*c.gpus*c.dtype) {
				assert.Equal(t, 2*(c.nodes-1), rep.CriticalInterNode, "inter-node steps on the critical path")
			}
		})
	}
	// Found by fuzzing: uneven blocks cut into pieces, whose pieces differ
	// in length from block to block, share reduce-scatter scratch slots.
	t.Run("uneven_pieces", func(t *testing.T) {
		mustVerify(t, Spec{Collective: coll.Allreduce, Algorithm: "parallel_rings", Intra: "iallgather_linear", Topo: topo.SweepShape(16, 8), Bytes: 1001, DtypeBytes: 1, Chunks: 3})
	})
	// Vectors shorter than the rank count: blocks of zero elements.
	for i, elems := range []int64{1, 2, 5, 31} {
		t.Run(fmt.Sprintf("short%d_%delems", i, elems), func(t *testing.T) {
			mustVerify(t, Spec{Collective: coll.Allreduce, Algorithm: "parallel_rings", Topo: topo.SweepShape(4, 8), Bytes: 4 * elems, DtypeBytes: 4, Chunks: 3})
		})
	}
}
