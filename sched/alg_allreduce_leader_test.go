package sched

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// The leader allreduce (goring's shared-GPU algorithm, docs/gpu.md)
// verifies over the grid: every rank's input reaches rank 0 once, the
// result goes back once. The two scratch slots chain every other input
// behind a reduction: P/2 receives and the return on the critical path.
func TestAllreduceLeaderVerifies(t *testing.T) {
	for i, c := range sampleGrid() {
		t.Run(fmt.Sprintf("case%d_%dx%d_%dB", i, c.nodes, c.gpus, c.bytes), func(t *testing.T) {
			spec := Spec{Collective: coll.Allreduce, Algorithm: "leader", Topo: topo.SweepShape(c.nodes, c.gpus), Bytes: c.bytes, DtypeBytes: c.dtype, Chunks: c.chunks}
			_, rep := mustVerify(t, spec)
			p := c.nodes * c.gpus
			assert.Equal(t, 2*int64(p-1)*c.bytes, rep.BytesMoved)
			if p > 1 {
				assert.Equal(t, p/2+1, rep.CriticalTransfers)
			}
		})
	}
}
