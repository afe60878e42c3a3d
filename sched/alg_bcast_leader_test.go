package sched

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// The leader broadcast (goring's shared-GPU algorithm, docs/gpu.md)
// verifies over the grid and every root: one transfer to each rank, one
// on the critical path.
func TestBcastLeaderVerifies(t *testing.T) {
	for i, c := range sampleGrid() {
		p := c.nodes * c.gpus
		for _, root := range []int{0, p - 1, p / 2} {
			t.Run(fmt.Sprintf("case%d_%dx%d_%dB_root%d", i, c.nodes, c.gpus, c.bytes, root), func(t *testing.T) {
				spec := Spec{Collective: coll.Bcast, Algorithm: "leader", Topo: topo.SweepShape(c.nodes, c.gpus), Bytes: c.bytes, DtypeBytes: c.dtype, Root: root}
				_, rep := mustVerify(t, spec)
				assert.Equal(t, int64(p-1)*c.bytes, rep.BytesMoved)
				if p > 1 {
					assert.Equal(t, 1, rep.CriticalTransfers)
				}
			})
		}
	}
}
