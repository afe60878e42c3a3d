package sched

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// The leader reduce-scatter (goring's shared-GPU algorithm, docs/gpu.md)
// verifies over the grid: every whole input reaches rank 0 once, every
// block goes back once.
func TestReduceScatterLeaderVerifies(t *testing.T) {
	for i, c := range sampleGrid() {
		t.Run(fmt.Sprintf("case%d_%dx%d_%dB", i, c.nodes, c.gpus, c.bytes), func(t *testing.T) {
			spec := Spec{Collective: coll.ReduceScatter, Algorithm: "leader", Topo: topo.SweepShape(c.nodes, c.gpus), Bytes: c.bytes, DtypeBytes: c.dtype}
			_, rep := mustVerify(t, spec)
			p := int64(c.nodes * c.gpus)
			assert.Equal(t, (p-1)*p*c.bytes+(p-1)*c.bytes, rep.BytesMoved)
		})
	}
}
