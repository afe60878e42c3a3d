package sched

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// Multi-lane, Algorithm 2: the lane allreduce verifies over nodes 1-16 x GPUs
// 1-8 and vectors from one element to 64 MiB: every element of every
// rank's dst reduced over all ranks exactly once.
func TestLaneAllreduceVerifies(t *testing.T) {
	for i, c := range sampleGrid() {
		bytes := c.bytes
		if bytes < 1<<20 {
			bytes *= int64(c.nodes * c.gpus)
		}
		t.Run(fmt.Sprintf("case%d_%dx%d_%dB_d%d_k%d", i, c.nodes, c.gpus, bytes, c.dtype, c.chunks), func(t *testing.T) {
			spec := Spec{Collective: coll.Allreduce, Algorithm: "lane", Topo: topo.SweepShape(c.nodes, c.gpus), Bytes: bytes, DtypeBytes: c.dtype, Chunks: c.chunks}
			plan, rep := mustVerify(t, spec)
			if c.nodes > 1 && bytes >= int64(c.nodes*c.gpus*c.dtype) {
				// Ring allreduce per lane (Multi-lane Alg. 1): 2(nodes-1) hops.
				assert.Equal(t, 2*(c.nodes-1), rep.CriticalInterNode)
			}
			// Each lane carries only its part: inter-node bytes per rank are
			// 2(nodes-1)/nodes of a part, not of the whole vector.
			part := MaxBlockLen(bytes, c.gpus, c.dtype)
			for r := range plan.Ranks {
				assert.LessOrEqual(t, rep.SentBytes[r], int64(c.gpus-1)*part*2+2*part)
			}
		})
	}
	for i, elems := range []int64{1, 3, 7, 33} {
		t.Run(fmt.Sprintf("short%d_%delems", i, elems), func(t *testing.T) {
			mustVerify(t, Spec{Collective: coll.Allreduce, Algorithm: "lane", Topo: topo.SweepShape(5, 8), Bytes: 8 * elems, DtypeBytes: 8, Chunks: 2})
		})
	}
}

// Ranks that do not split into equal nodes cannot form lanes.
func TestHierarchicalRejectUnequalNodes(t *testing.T) {
	tp := topo.SweepShape(3, 4)
	tp.Nodes[2].GPUs = tp.Nodes[2].GPUs[:2]
	cases := []struct {
		coll coll.Collective
		alg  string
	}{
		{coll.Allgather, "parallel_rings"},
		{coll.ReduceScatter, "parallel_rings"},
		{coll.Allreduce, "parallel_rings"},
		{coll.Allreduce, "lane"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("case%d_%s_%s", i, c.coll, c.alg), func(t *testing.T) {
			_, err := Generate(Spec{Collective: c.coll, Algorithm: c.alg, Topo: tp, Bytes: 64, DtypeBytes: 4})
			require.Error(t, err)
			assert.True(t, IsUnsupported(err), "%v", err)
			assert.Contains(t, err.Error(), "node 0 has 4 GPUs but node 2 has 2")
		})
	}
}
