package sched

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// Parallel Rings, section II: the flat ring allgather (Open MPI / UCC tl/ucp
// baseline) verifies for nodes x GPUs x sizes x chunks, and its critical
// path is P-1 lock-stepped rounds.
func TestAllgatherRingVerifies(t *testing.T) {
	for i, c := range sampleGrid() {
		t.Run(fmt.Sprintf("case%d_%dx%d_%dB_d%d_k%d", i, c.nodes, c.gpus, c.bytes, c.dtype, c.chunks), func(t *testing.T) {
			spec := Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: topo.SweepShape(c.nodes, c.gpus), Bytes: c.bytes, DtypeBytes: c.dtype, Chunks: c.chunks}
			_, rep := mustVerify(t, spec)
			p := c.nodes * c.gpus
			assert.Equal(t, p-1, rep.CriticalTransfers, "critical transfers")
			if c.nodes > 1 {
				assert.Equal(t, p-1, rep.CriticalInterNode, "inter-node steps on the critical path")
			}
			assert.Equal(t, int64(p-1)*c.bytes*int64(p), rep.BytesMoved)
		})
	}
}

// Parallel Rings section II: the flat ring has P-1
// inter-node transfers on its critical path on clusterB with 16, 32 and
// 64 GPUs (lock-stepped rounds wait for the slowest, inter-node, link).
func TestAllgatherRingCriticalPathOnClusterB(t *testing.T) {
	for i, nodes := range []int{4, 8, 16} {
		one, err := topo.Preset("clusterB")
		require.NoError(t, err)
		tp, err := one.Repeat(nodes)
		require.NoError(t, err)
		_, rep := mustVerify(t, Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: tp, Bytes: 1 << 20, DtypeBytes: 4})
		p := tp.NumGPUs()
		assert.Equal(t, p-1, rep.CriticalInterNode, "case %d: %d GPUs", i, p)
		assert.Equal(t, nodes*(p-1), rep.InterNodeTransfers, "case %d: one ring hop per node boundary per round", i)
	}
}
