package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// loadsOf generates rank's program of spec, annotates it with every peer
// on rank's node (per the topology) and returns the loads of its sends.
func loadsOf(t *testing.T, spec Spec, rank int) []StepLoad {
	t.Helper()
	plan, err := GenerateRank(spec, rank)
	require.NoError(t, err)
	prog := &plan.Ranks[rank]
	plan.AnnotateRankLoads(rank)
	var out []StepLoad
	for _, s := range prog.Steps {
		if s.Op == OpSend {
			out = append(out, s.Path.Load)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// A 2-GPU ring allgather: every round both ranks send and receive, so
// every send shares the pair with the peer's push into this GPU.
func TestLoadsTwoGPURing(t *testing.T) {
	spec := Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: topo.SweepShape(1, 2), Bytes: 1 << 20, DtypeBytes: 1}
	for rank := range 2 {
		for _, l := range loadsOf(t, spec, rank) {
			assert.Equal(t, StepLoad{Out: 1, In: 1, Senders: 2}, l, "rank %d", rank)
		}
	}
}

// A ring in pipelined pieces: the pieces of one round are at the same
// level, so each send shares the GPU with the round's other pieces.
func TestLoadsChunkedRing(t *testing.T) {
	spec := Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: topo.SweepShape(1, 4), Bytes: 1 << 20, DtypeBytes: 1, Chunks: 3}
	for _, l := range loadsOf(t, spec, 1) {
		assert.Equal(t, StepLoad{Out: 3, In: 3, Senders: 2}, l)
	}
}

// MultiWrite's allgather is one step: every rank writes to every peer at
// once, and receives from every peer.
func TestLoadsMultiWrite(t *testing.T) {
	spec := Spec{Collective: coll.Allgather, Algorithm: "multiwrite", Topo: topo.SweepShape(1, 4), Bytes: 4096, DtypeBytes: 1}
	for _, l := range loadsOf(t, spec, 2) {
		assert.Equal(t, StepLoad{Out: 3, In: 3, Senders: 4}, l)
	}
}

// Every round's load, on one node of four GPUs (rank 1), for algorithms
// whose receives are posted early, before the round whose data they take
// (lane and Parallel Rings allreduce pre-post their allgather phase's
// receives; recursive doubling its later rounds'): they count in the
// round of the matching send, not at their own dependency level.
func TestLoadsFourGPUAlgorithms(t *testing.T) {
	for _, tc := range []struct {
		c    coll.Collective
		alg  string
		want StepLoad
	}{
		{coll.Allgather, "ring", StepLoad{1, 1, 2}},
		{coll.Allgather, "parallel_rings", StepLoad{3, 3, 4}},
		{coll.Allgather, "recursive_doubling", StepLoad{1, 1, 2}},
		{coll.Allreduce, "ring", StepLoad{1, 1, 2}},
		{coll.Allreduce, "lane", StepLoad{3, 3, 4}},
		{coll.Allreduce, "parallel_rings", StepLoad{3, 3, 4}},
		{coll.Allreduce, "recursive_doubling", StepLoad{1, 1, 2}},
		{coll.Allreduce, "rabenseifner", StepLoad{1, 1, 2}},
		{coll.ReduceScatter, "ring", StepLoad{1, 1, 2}},
	} {
		dt := 1
		if tc.c.Reduces() {
			dt = 4
		}
		spec := Spec{Collective: tc.c, Algorithm: tc.alg, Topo: topo.SweepShape(1, 4), Bytes: 1 << 20, DtypeBytes: dt}
		for _, l := range loadsOf(t, spec, 1) {
			assert.Equal(t, tc.want, l, "%v %s", tc.c, tc.alg)
		}
	}
}

// A broadcast's root on two GPUs only sends: its one transfer runs on an
// otherwise idle pair.
func TestLoadsIdleRoot(t *testing.T) {
	spec := Spec{Collective: coll.Bcast, Algorithm: "knomial", Topo: topo.SweepShape(1, 2), Bytes: 4096, DtypeBytes: 1}
	assert.Equal(t, []StepLoad{{Out: 1, In: 0, Senders: 1}}, loadsOf(t, spec, 0))
}

// Sends to another node carry no load (the split is for GPUs of one node)
// and only peers of the node count.
func TestLoadsOnlyWithinTheNode(t *testing.T) {
	spec := Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: topo.SweepShape(2, 1), Bytes: 4096, DtypeBytes: 1}
	for _, l := range loadsOf(t, spec, 0) {
		assert.Equal(t, StepLoad{}, l)
	}
}
