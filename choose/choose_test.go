package choose

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/topo"
)

// The measured table, as the team layer runs it.
func TestMeasured(t *testing.T) {
	pair, four, host := Shape{Size: 2, Push: true}, Shape{Size: 4, Push: true}, Shape{Size: 4}
	shared, sharedNoPush := Shape{Size: 4, Push: true, SharedGPU: true}, Shape{Size: 4, SharedGPU: true}
	for _, c := range []struct {
		coll          coll.Collective
		bytes         int64
		host          bool
		team          Shape
		alg, fallback string
		chunks        int
	}{
		{coll.Allreduce, 4 << 10, true, host, "recursive_doubling", "rabenseifner", 0},
		{coll.Allreduce, 8 << 10, true, host, "rabenseifner", "", 0},
		{coll.Allgather, 8 << 10, true, host, "recursive_doubling", "ring", 0},
		{coll.Allgather, 16 << 10, true, host, "ring", "", 0},
		{coll.Allgather, 1 << 20, false, four, "multiwrite", "ring", 0},
		{coll.Allgather, 1 << 20, false, Shape{Size: 4, Push: true, GPUs: 4}, "neighbor", "ring", 0}, // a GPU each: each copies over its own links
		{coll.Allgather, 1 << 20, false, Shape{Size: 2, Push: true, GPUs: 2}, "multiwrite", "ring", 0},
		{coll.Allgather, 1 << 20, false, host, "parallel_rings", "ring", 0}, // no push engine
		{coll.Allreduce, 64 << 20, false, four, "recursive_doubling", "rabenseifner", 0},
		{coll.Allreduce, 32 << 20, false, pair, "recursive_doubling", "rabenseifner", 0},
		{coll.Allreduce, 64 << 20, false, pair, "ring", "rabenseifner", 2},
		{coll.ReduceScatter, 64 << 20, false, pair, "ring", "", 2},
		{coll.Bcast, 64 << 20, false, pair, "knomial", "", 0},
		{coll.Alltoallv, 1 << 20, true, host, "pairwise", "", 0},
		{coll.Allreduce, 64 << 20, false, shared, "leader", "rabenseifner", 0},
		{coll.Allgather, 4, false, shared, "leader", "ring", 0},
		{coll.Allreduce, 64 << 20, true, shared, "rabenseifner", "", 0}, // host memory: the message form would not pay
		{coll.ReduceScatter, 64 << 20, false, shared, "leader", "ring", 0},
		{coll.ReduceScatter, 64 << 20, false, Shape{Size: 9, Push: true, SharedGPU: true}, "ring", "", 0}, // beyond one fused step
		{coll.Bcast, 64 << 20, false, shared, "knomial", "", 0},                                           // the root alone pushes: no turn to save
		{coll.Allreduce, 64 << 20, false, sharedNoPush, "recursive_doubling", "rabenseifner", 0},
		{coll.Dispatch, 1 << 10, false, four, "multiwrite", "unicast", 0},
		{coll.Combine, 1 << 10, true, Shape{Size: 8, Nodes: 2}, "multiwrite", "unicast", 0},
		{coll.Allreduce, 4 << 10, true, Shape{Size: 8, Nodes: 2}, "recursive_doubling", "rabenseifner", 0}, // host rows: any hosts
	} {
		s := c.team
		s.Coll, s.Bytes, s.Host = c.coll, c.bytes, c.host
		ch, ok := Measured(s)
		require.True(t, ok, "%s %d host=%v %+v", c.coll, c.bytes, c.host, c.team)
		assert.Equal(t, c.alg, ch.Alg, "%s %d host=%v %+v", c.coll, c.bytes, c.host, c.team)
		assert.Equal(t, c.fallback, ch.Fallback, "%s %d host=%v %+v", c.coll, c.bytes, c.host, c.team)
		assert.Equal(t, c.chunks, ch.Chunks, "%s %d host=%v %+v", c.coll, c.bytes, c.host, c.team)
	}
}

// Every collective goring runs has, for each memory, a last row without
// bounds on bytes (the fallback every narrower row falls back to), and
// every row names a registered algorithm.
func TestTableIsWhole(t *testing.T) {
	for _, r := range Table {
		_, err := sched.Lookup(r.Coll, r.Alg)
		assert.NoError(t, err, "%+v", r)
	}
	for _, c := range coll.Collectives {
		for _, host := range []bool{true, false} {
			s := Shape{Coll: c, Bytes: 1 << 20, Host: host, Size: 4}
			ch, ok := Measured(s)
			require.True(t, ok, "%s host=%v", c, host)
			last := ch.Fallback
			if last == "" {
				last = ch.Alg
			}
			for _, r := range Table {
				if r.Coll == c && r.matches(s) && r.Alg == last {
					assert.Zero(t, r.MinBytes+r.MaxBytes, "%s host=%v: the fallback row %+v has bounds", c, host, r)
				}
			}
		}
	}
	assert.Equal(t, "knomial", Base(coll.Bcast))
	assert.Equal(t, "pairwise", Base(coll.Alltoallv))
	assert.Equal(t, "rabenseifner", Base(coll.Allreduce))
}

// Across hosts on device memory no row was measured: the model decides,
// the cheapest of the collective's algorithms on the shape's topology.
func TestAutoAsksTheModelAcrossHosts(t *testing.T) {
	tp, err := topo.Preset("clusterB")
	require.NoError(t, err)
	tp, err = tp.Repeat(2)
	require.NoError(t, err)
	s := OnTopology(coll.Allgather, 1<<20, tp)
	_, ok := Measured(s)
	require.False(t, ok)
	costs := Costs(coll.Allgather, tp, sim.Options{})
	ch, err := Auto(s, costs)
	require.NoError(t, err)
	best, _, err := costs.Best(1 << 20)
	require.NoError(t, err)
	assert.Equal(t, best, ch.Alg)
	assert.Contains(t, ch.Why, "model")
	ch, err = Auto(s, nil)
	require.NoError(t, err)
	assert.Equal(t, Base(coll.Allgather), ch.Alg, "no row and no model: the base row")

	// One host: the table's row, as the team layer would run it.
	one, err := topo.Preset("clusterB")
	require.NoError(t, err)
	ch, err = Auto(OnTopology(coll.Allgather, 1<<20, one), nil)
	require.NoError(t, err)
	assert.Equal(t, "neighbor", ch.Alg)

	// Processes sharing one GPU: the leader row.
	shared, err := topo.Preset("h100-shared4")
	require.NoError(t, err)
	ch, err = Auto(OnTopology(coll.Allreduce, 1<<20, shared), nil)
	require.NoError(t, err)
	assert.Equal(t, "leader", ch.Alg)
}

// Generate says what auto chose and why; a choice that cannot serve the
// shape gives way to its fallback.
func TestGenerate(t *testing.T) {
	tp := topo.SweepShape(1, 3)
	spec := sched.Spec{Collective: coll.Allgather, Topo: tp, Bytes: 64, DtypeBytes: 4}
	plan, err := Generate(spec, Shape{Coll: coll.Allgather, Bytes: 64, Host: true, Size: 3})
	require.NoError(t, err)
	assert.Equal(t, "ring", plan.Algorithm)
	assert.Contains(t, plan.Note, "auto: chose ring (skipped recursive_doubling: ")
	assert.Contains(t, plan.Note, "by choose.Table row")
	_, err = sched.Verify(plan)
	require.NoError(t, err)
}

// A one-host team's shape: one GPU is shared, more are a GPU each, none
// is host memory only; every shape of one host has a row to claim by.
func TestOneHostClaim(t *testing.T) {
	assert.Equal(t, Shape{Size: 4}, OneHost(4, 0))
	assert.True(t, OneHost(4, 1).SharedGPU)
	assert.False(t, OneHost(4, 4).SharedGPU)
	assert.True(t, OneHost(4, 4).Push)
	for _, gpus := range []int{0, 1, 4} {
		alg, _ := OneHost(4, gpus).Claim(coll.Allreduce, 1<<20, gpus == 0)
		assert.NotEmpty(t, alg, "gpus %d", gpus)
	}
	// The algorithm a team of the shape runs (the team layer's shape has
	// its host's GPU count): four ranks with a GPU each copy to their
	// neighbours, four on one GPU run the leader, a pair multiwrite.
	for _, c := range []struct {
		size, gpus int
		alg        string
	}{{4, 4, "neighbor"}, {8, 8, "neighbor"}, {4, 1, "leader"}, {2, 2, "multiwrite"}} {
		alg, _ := OneHost(c.size, c.gpus).Claim(coll.Allgather, 256<<20, false)
		assert.Equal(t, c.alg, alg, "%d ranks on %d GPUs", c.size, c.gpus)
		team := Shape{Coll: coll.Allgather, Bytes: 256 << 20, Size: c.size, GPUs: c.gpus, Push: true, SharedGPU: c.gpus == 1}
		ch, ok := Measured(team)
		require.True(t, ok)
		assert.Equal(t, ch.Alg, alg, "%d ranks on %d GPUs: the team layer's choice", c.size, c.gpus)
	}
}

// Where the messages beat the node kernels, measured on a pair, the
// choice says so (Choice.OverNode), and nowhere else: not below the
// sizes measured, not on teams of other sizes, not on host memory.
func TestOverNode(t *testing.T) {
	pair, four := Shape{Size: 2, Push: true, GPUs: 2}, Shape{Size: 4, Push: true, GPUs: 4}
	for _, c := range []struct {
		coll  coll.Collective
		bytes int64
		team  Shape
		over  bool
	}{
		{coll.Allreduce, 32 << 20, pair, false},
		{coll.Allreduce, 64 << 20, pair, false}, // one slot: the kernel
		{coll.Allreduce, 64<<20 + 4, pair, true},
		{coll.Allreduce, 256 << 20, pair, true},
		{coll.Allreduce, 256 << 20, four, false}, // four H200s: the kernels in pieces were faster
		{coll.ReduceScatter, 32 << 20, pair, false},
		{coll.ReduceScatter, 64 << 20, pair, true},
		{coll.Allgather, 16 << 20, pair, false},
		{coll.Allgather, 32 << 20, pair, true},
		{coll.Allgather, 32 << 20, four, false},
		{coll.Bcast, 64 << 20, pair, false},
	} {
		s := c.team
		s.Coll, s.Bytes = c.coll, c.bytes
		ch, ok := Measured(s)
		require.True(t, ok, "%s %d %+v", c.coll, c.bytes, c.team)
		assert.Equal(t, c.over, ch.OverNode, "%s %d %+v", c.coll, c.bytes, c.team)
		s.Host = true
		ch, _ = Measured(s)
		assert.False(t, ch.OverNode, "%s %d on host memory", c.coll, c.bytes)
	}
}
