package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/team"
	"github.com/goring-hpc/goring/topo"
	"github.com/goring-hpc/goring/ucx"
)

// Every algorithm of every collective through the team layer
// (Config.Team): four ranks in this process, each a team of its own
// worker on two emulated nodes of two (Team.SetTopology), their cards
// exchanged here as goring bench's coordinator exchanges them, every
// iteration validated over real UCX; dispatch and combine from one
// routing. The rows are those of the plans bench makes.
func TestRunThroughTeam(t *testing.T) {
	tp := synthTopo(t, 2)
	n := tp.NumGPUs()
	r, err := moe.Generate(moe.Options{NRanks: n, TokensPerRank: 5, TokenBytes: 4 * 6, TopK: 2, Experts: 8, Seed: 4})
	require.NoError(t, err)
	for i, tc := range []struct {
		c     coll.Collective
		dtype coll.Dtype
		op    coll.Op
		sizes []int64
	}{
		{coll.Allgather, coll.DtypeInvalid, coll.OpInvalid, []int64{1, 40001}},
		{coll.Allreduce, coll.Float32, coll.Sum, []int64{4, 40004}},
		{coll.ReduceScatter, coll.Int16, coll.Max, []int64{2, 1026}},
		{coll.Bcast, coll.DtypeInvalid, coll.OpInvalid, []int64{1, 3333}},
		{coll.Alltoallv, coll.DtypeInvalid, coll.OpInvalid, []int64{7, 4096}},
		{coll.Dispatch, coll.DtypeInvalid, coll.OpInvalid, []int64{5}},
		{coll.Combine, coll.Float32, coll.Sum, []int64{5}},
	} {
		var algs []string
		for _, a := range sched.Algorithms(tc.c) {
			algs = append(algs, a.Name)
		}
		teams := newBenchTeams(t, tp, "tls=self,sm")
		rows := runThroughTeams(t, teams, func(rank int) Config {
			return Config{Rank: rank, Topo: tp, Collective: tc.c, Algorithms: algs, Sizes: tc.sizes, Dtype: tc.dtype, Op: tc.op,
				Iters: 2, Warmup: 1, Validate: true, Root: 1, CallTimeout: 20 * time.Second, Team: teams[rank],
				Traffic: func(b int64) ([][]int64, error) { return UniformCounts(n, b), nil },
				Routing: func(int) (*moe.Routing, error) { return r, nil }}
		})
		require.NotEmpty(t, rows, "case %d", i)
		for _, row := range rows {
			assert.True(t, row.Validated, "case %d %s", i, row.Algorithm)
			assert.Equal(t, "host", row.Mem, "case %d", i)
		}
	}
}

// Lane counts through the team layer (Config.LaneTeams): each count's
// calls run on a team whose context has that many lanes, validated, the
// rows marked with their count; a count with no team of its own has no
// transports to run on.
func TestRunLanesThroughTeam(t *testing.T) {
	tp := synthTopo(t, 2)
	byCount := map[int][]*team.Team{1: newBenchTeams(t, tp, "tls=self,sm"), 3: newBenchTeams(t, tp, "tls=self,sm;lanes=3")}
	for _, c := range []coll.Collective{coll.Allgather, coll.Allreduce} {
		dtype, op := coll.DtypeInvalid, coll.OpInvalid
		if c.Reduces() {
			dtype, op = coll.Float32, coll.Sum
		}
		rows := runThroughTeams(t, byCount[1], func(r int) Config {
			return Config{Rank: r, Topo: tp, Collective: c, Algorithms: []string{"ring"}, Sizes: []int64{12, 40004}, Dtype: dtype, Op: op,
				Iters: 2, Warmup: 1, Validate: true, CallTimeout: 20 * time.Second, Lanes: []int{1, 3},
				LaneTeams: map[int]*team.Team{1: byCount[1][r], 3: byCount[3][r]}}
		})
		require.Len(t, rows, 4, "%s", c)
		for i, row := range rows {
			assert.True(t, row.Validated, "%s row %d", c, i)
			assert.Equal(t, []int{1, 3}[i/2], row.Lanes, "%s row %d", c, i)
		}
	}
	cfg := Config{Rank: 0, Topo: tp, Collective: coll.Allgather, Algorithms: []string{"ring"}, Sizes: []int64{12}, Lanes: []int{3},
		LaneTeams: map[int]*team.Team{1: byCount[1][0]}}
	_, err := Run(context.Background(), cfg, byCount[1][0].Transport(), rankCtrl{newChanCtrl(1), 0})
	assert.ErrorContains(t, err, "3 lanes asked for, 1 transports")
}

// newBenchTeams makes one connected team per rank of tp in this process,
// on tp (SetTopology), from one context of opts; they are destroyed when
// t ends.
func newBenchTeams(t *testing.T, tp *topo.Topology, opts string) []*team.Team {
	t.Helper()
	if err := ucx.Load(); err != nil {
		t.Skipf("UCX not loadable: %v", err)
	}
	n := tp.NumGPUs()
	ctx, err := team.NewContext(opts, nil)
	require.NoError(t, err)
	teams := make([]*team.Team, n)
	cards := make([][]byte, n)
	slot := 0
	for r := range teams {
		teams[r], err = team.NewTeam(ctx, r, n)
		require.NoError(t, err)
		require.NoError(t, teams[r].SetTopology(tp))
		cards[r], err = teams[r].Card()
		require.NoError(t, err)
		slot = max(slot, len(cards[r]))
	}
	all := make([]byte, n*slot)
	for r, c := range cards {
		copy(all[r*slot:], c)
	}
	for r, tm := range teams {
		require.NoError(t, tm.Connect(all, slot), "rank %d", r)
	}
	t.Cleanup(func() {
		for _, tm := range teams {
			assert.NoError(t, tm.Destroy())
		}
		assert.NoError(t, ctx.Close())
	})
	return teams
}

// runThroughTeams runs cfg(r) on every rank, each in its own goroutine
// with its team's transport for the barriers, and returns rank 0's rows;
// any rank's error fails t.
func runThroughTeams(t *testing.T, teams []*team.Team, cfg func(r int) Config) []Row {
	t.Helper()
	n := len(teams)
	ctrl := newChanCtrl(n)
	rows := make([][]Row, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows[r], errs[r] = Run(context.Background(), cfg(r), teams[r].Transport(), rankCtrl{ctrl, r})
		}()
	}
	wg.Wait()
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	return rows[0]
}

// Config.InitPerCall: each iteration's call is a new team.Coll, made and
// finalized around its post, as a UCC user's non-persistent call; every
// iteration validated. Without a team there is no such call to make.
func TestRunThroughTeamInitPerCall(t *testing.T) {
	tp := synthTopo(t, 2)
	teams := newBenchTeams(t, tp, "tls=self,sm")
	for _, c := range []coll.Collective{coll.Allgather, coll.Allreduce, coll.Alltoallv} {
		dtype, op := coll.DtypeInvalid, coll.OpInvalid
		if c.Reduces() {
			dtype, op = coll.Float32, coll.Sum
		}
		n := tp.NumGPUs()
		rows := runThroughTeams(t, teams, func(rank int) Config {
			return Config{Rank: rank, Topo: tp, Collective: c, Algorithms: []string{Auto}, Sizes: []int64{8, 40004}, Dtype: dtype, Op: op,
				Iters: 3, Warmup: 1, Validate: true, CallTimeout: 20 * time.Second, Team: teams[rank], InitPerCall: true,
				Traffic: func(b int64) ([][]int64, error) { return UniformCounts(n, b), nil }}
		})
		require.Len(t, rows, 2, "%s", c)
		for _, row := range rows {
			assert.True(t, row.Validated, "%s", c)
			assert.NotEmpty(t, row.Ran, "%s", c)
		}
	}
	// Each call posted is a new Coll, never the one newRankCall made;
	// without InitPerCall that one is reposted.
	for _, perCall := range []bool{true, false} {
		n := tp.NumGPUs()
		posted := make([][]*team.Coll, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for r := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cfg := &Config{Rank: r, Topo: tp, Collective: coll.Allgather, Sizes: []int64{64}, CallTimeout: 20 * time.Second,
					Team: teams[r], InitPerCall: perCall}
				lp, err := cfg.planLanes("ring", 64, 1)
				if err != nil {
					errs[r] = err
					return
				}
				rc, err := newRankCall(cfg, lp)
				if err != nil {
					errs[r] = err
					return
				}
				defer rc.close()
				for range 3 {
					if errs[r] = rc.runTeamCall(context.Background(), time.Now().Add(20*time.Second)); errs[r] != nil {
						return
					}
					posted[r] = append(posted[r], rc.ran)
				}
				posted[r] = append(posted[r], rc.coll)
			}()
		}
		wg.Wait()
		for r := range n {
			require.NoError(t, errs[r], "rank %d", r)
			p := posted[r]
			if perCall {
				assert.NotSame(t, p[0], p[1], "rank %d", r)
				assert.NotSame(t, p[1], p[2], "rank %d", r)
				assert.NotSame(t, p[3], p[2], "rank %d: the first Coll is never posted", r)
			} else {
				assert.Same(t, p[0], p[3], "rank %d", r)
				assert.Same(t, p[2], p[3], "rank %d", r)
			}
		}
	}
	_, err := newRankCall(&Config{Rank: 0, Collective: coll.Allgather, InitPerCall: true}, &lanePlans{whole: &sched.Plan{Collective: coll.Allgather, Algorithm: "ring", NRanks: 2, Ranks: make([]sched.RankProgram, 2)}})
	assert.ErrorContains(t, err, "needs the team layer")
}

// A rank that busy-polls (--spin-polls negative: SpinPolls < 0) still
// keeps its call's deadline and its context: with its peers never
// posting, the call ends with the deadline error instead of polling
// forever, and a cancelled context ends it too.
func TestTeamCallBusyPollKeepsDeadline(t *testing.T) {
	tp := synthTopo(t, 1)
	teams := newBenchTeams(t, tp, "tls=self,sm")
	tr := teams[0].Transport()
	spin := tr.SpinPolls
	tr.SpinPolls = -1
	defer func() { tr.SpinPolls = spin }()
	cfg := &Config{Rank: 0, Topo: tp, Collective: coll.Allgather, Sizes: []int64{64}, CallTimeout: time.Second, Team: teams[0]}
	lp, err := cfg.planLanes("ring", 64, 1)
	require.NoError(t, err)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for i, tc := range []struct {
		ctx      context.Context
		deadline time.Time
		want     error
	}{
		{context.Background(), time.Now(), exec.ErrDeadline},
		{cancelled, time.Now().Add(time.Hour), context.Canceled},
	} {
		rc, err := newRankCall(cfg, lp) // a call of its own: the last one is left in flight
		require.NoError(t, err)
		defer rc.close()
		done := make(chan error, 1)
		go func() { done <- rc.runTeamCall(tc.ctx, tc.deadline) }()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, tc.want, "case %d", i)
		case <-time.After(time.Minute):
			t.Fatalf("case %d: the call polled on past its deadline and context", i) // the goroutine spins on; the test binary ends
		}
	}
}
