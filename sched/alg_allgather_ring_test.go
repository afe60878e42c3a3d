package sched

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
)

// Seed 000 section II: the flat ring allgather (Open MPI / UCC tl/ucp
// baseline) verifies for nodes x GPUs x sizes x chunks, and its critical
// path is P-1 lock-stepped rounds.
func TestAllgatherRingVerifies(t *testing.T) {
	for i, c := range sampleGrid() {
		t.Run(fmt.Sprintf("case%d_%dx%d_%dB_d%d_k%d", i, c.nodes, c.gpus, c.bytes, c.dtype, c.chunks), func(t *testing.T) {
			spec := Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: synthTopo(c.nodes, c.gpus), Bytes: c.bytes, DtypeBytes: c.dtype, Chunks: c.chunks}
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
