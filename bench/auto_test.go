package bench

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/choose"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/team"
	"github.com/goring-hpc/goring/topo"
)

// Auto through the team layer: four ranks on two emulated nodes of two,
// host memory over real UCX, every call naming no algorithm. Each row
// says auto, is validated, and names the algorithm the team ran: goring's
// choice for the shape (choose.Auto, as the team layer sees a host team
// across nodes), else its fallback where the choice does not serve the
// size, on the messages of one Machine (the team's lanes are one).
func TestRunAutoThroughTeam(t *testing.T) {
	tp := synthTopo(t, 2)
	n := tp.NumGPUs()
	teams := newBenchTeams(t, tp, "tls=self,sm")
	for _, tc := range []struct {
		c     coll.Collective
		dtype coll.Dtype
		op    coll.Op
		sizes []int64
	}{
		{coll.Allgather, coll.DtypeInvalid, coll.OpInvalid, []int64{1, 40001, 1 << 20}},
		{coll.Allreduce, coll.Float32, coll.Sum, []int64{4, 40004, 1 << 20}},
		{coll.ReduceScatter, coll.Int16, coll.Max, []int64{2, 1026}},
		{coll.Bcast, coll.DtypeInvalid, coll.OpInvalid, []int64{1, 3333}},
		{coll.Alltoallv, coll.DtypeInvalid, coll.OpInvalid, []int64{7, 4096}},
	} {
		rows := runThroughTeams(t, teams, func(rank int) Config {
			return Config{Rank: rank, Topo: tp, Collective: tc.c, Algorithms: []string{Auto}, Sizes: tc.sizes, Dtype: tc.dtype, Op: tc.op,
				Iters: 2, Warmup: 1, Validate: true, Root: 1, CallTimeout: 20 * time.Second, Team: teams[rank],
				Traffic: func(b int64) ([][]int64, error) { return UniformCounts(n, b), nil }}
		})
		require.Len(t, rows, len(tc.sizes), "%s", tc.c)
		for i, row := range rows {
			t.Logf("%s %d bytes: %s (%s)", tc.c, row.Bytes, row.Ran, row.Runner)
			assert.Equal(t, Auto, row.Algorithm, "%s row %d", tc.c, i)
			assert.True(t, row.Validated, "%s row %d", tc.c, i)
			assert.Equal(t, tc.sizes[i], row.Bytes, "%s row %d", tc.c, i)
			if tc.c == coll.Alltoallv { // its own runner, after a count exchange where its algorithm needs one
				assert.Equal(t, "alltoallv", row.Runner, "%s row %d", tc.c, i)
				assert.NotEmpty(t, row.Ran, "%s row %d", tc.c, i)
				continue
			}
			assert.Equal(t, autoExpected(t, tp, tc.c, row.Bytes, tc.dtype), row.Ran, "%s row %d", tc.c, i)
			assert.Equal(t, "machine", row.Runner, "%s row %d", tc.c, i)
		}
	}
}

// autoExpected is what the team runs for a host call of c on B bytes on
// tp when the call names no algorithm: choose.Auto's choice on the team's
// shape, else its fallback where the choice does not serve B.
func autoExpected(t *testing.T, tp *topo.Topology, c coll.Collective, B int64, dtype coll.Dtype) string {
	t.Helper()
	ch, err := choose.Auto(choose.Shape{Coll: c, Bytes: B, Host: true, Size: tp.NumGPUs(), Nodes: tp.NumNodes()}, nil)
	require.NoError(t, err)
	spec := sched.Spec{Collective: c, Algorithm: ch.Alg, Topo: tp, Bytes: B, DtypeBytes: 1}
	if c.Reduces() {
		spec.DtypeBytes = dtype.Size()
	}
	names := []string{ch.Alg}
	if ch.Fallback != "" {
		names = append(names, ch.Fallback)
	}
	plan, err := sched.GenerateFirst(spec, names)
	require.NoError(t, err, "%s at %d bytes: %s", c, B, ch.Why)
	return plan.Algorithm
}

// Auto on lanes: on a team whose context runs three lanes (lanes=3), a
// host call that names no algorithm runs on the lanes runner, validated,
// the row marked with its count; on one lane, on one Machine.
func TestRunAutoOnLanes(t *testing.T) {
	tp := synthTopo(t, 2)
	byCount := map[int][]*team.Team{1: newBenchTeams(t, tp, "tls=self,sm"), 3: newBenchTeams(t, tp, "tls=self,sm;lanes=3")}
	rows := runThroughTeams(t, byCount[1], func(r int) Config {
		return Config{Rank: r, Topo: tp, Collective: coll.Allreduce, Algorithms: []string{Auto}, Sizes: []int64{40004}, Dtype: coll.Float32, Op: coll.Sum,
			Iters: 2, Warmup: 1, Validate: true, CallTimeout: 20 * time.Second, Lanes: []int{1, 3},
			LaneTeams: map[int]*team.Team{1: byCount[1][r], 3: byCount[3][r]}}
	})
	require.Len(t, rows, 2)
	for i, row := range rows {
		assert.True(t, row.Validated, "row %d", i)
		assert.Equal(t, Auto, row.Algorithm, "row %d", i)
		assert.Equal(t, []int{1, 3}[i], row.Lanes, "row %d", i)
		assert.Equal(t, []string{"machine", "lanes"}[i], row.Runner, "row %d", i)
		assert.NotEmpty(t, row.Ran, "row %d", i)
	}
}

// Auto needs a team: without one (bench's own executor, the namespace
// testbed's), nothing chooses, and the run says so.
func TestRunAutoNeedsTeam(t *testing.T) {
	tp := synthTopo(t, 1)
	cfg := Config{Rank: 0, Topo: tp, Collective: coll.Allgather, Algorithms: []string{Auto}, Sizes: []int64{8}, Iters: 1, Warmup: 0}
	require.NoError(t, cfg.PlanLanes(Auto, 8, 1), "auto plans: the buffers of the collective")
	_, err := Run(context.Background(), cfg, nil, rankCtrl{newChanCtrl(1), 0})
	assert.ErrorContains(t, err, "needs a team")
}
