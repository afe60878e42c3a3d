package mpath

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

func h200Planner(t *testing.T) (*Planner, *topo.Node) {
	t.Helper()
	f, err := os.Open("../calib/testdata/calibration_h200x2.json")
	require.NoError(t, err)
	defer f.Close()
	cal, err := calib.Load(f)
	require.NoError(t, err)
	tp, err := topo.Preset("h200x2")
	require.NoError(t, err)
	node := &tp.Nodes[0]
	p, err := NewPlanner(node, cal, model.DefaultOptions(), 64<<20)
	require.NoError(t, err)
	return p, node
}

func stagedBytes(p *Plan) int64 {
	if p == nil {
		return 0
	}
	var b int64
	for _, pp := range p.Paths {
		if pp.Path.Staged {
			b += pp.Bytes
		}
	}
	return b
}

// An idle transfer on the calibrated 2xH200 pair gets the split (about 8%
// on the host path at 256 MiB), in both directions (the mirror of the
// measured pair), and small transfers stay direct.
func TestPlannerIdleSplits(t *testing.T) {
	p, _ := h200Planner(t)
	n := int64(256 << 20)
	for _, pair := range [][2]int{{0, 1}, {1, 0}} {
		pl := p.Plan(pair[0], pair[1], n, sched.Path{})
		require.NotNil(t, pl, "%v", pair)
		frac := float64(stagedBytes(pl)) / float64(n)
		assert.InDelta(t, 0.075, frac, 0.03, "%v: host share", pair)
	}
	assert.Nil(t, p.Plan(0, 1, 1<<20, sched.Path{}), "below the threshold: direct")
	assert.Same(t, p.Plan(0, 1, n, sched.Path{}), p.Plan(0, 1, n, sched.Path{}), "plans are cached")
}

// The hint chooses among what the model allows.
func TestPlannerHints(t *testing.T) {
	p, _ := h200Planner(t)
	n := int64(64<<20 + 3)
	assert.Nil(t, p.Plan(0, 1, n, sched.Path{Kind: sched.PathDirect}))
	assert.Nil(t, p.Plan(0, 1, n, sched.Path{Kind: sched.PathRail, Index: 1}))
	assert.Nil(t, p.Plan(0, 1, n, sched.Path{Kind: sched.PathGPU, Index: 1}), "a relay hop into GPU 1 is a direct hop")
	assert.Nil(t, p.Plan(0, 1, n, sched.Path{Kind: sched.PathGPU, Index: 5}), "no such staged path: direct")
	host := p.Plan(0, 1, n, sched.Path{Kind: sched.PathHost})
	require.NotNil(t, host)
	require.Len(t, host.Paths, 1)
	assert.Equal(t, model.HostName, host.Paths[0].Path.Name)
	assert.Equal(t, n, host.Paths[0].Bytes)
	assert.Nil(t, p.Plan(0, 0, n, sched.Path{}), "same GPU")
}

// A calibration for another node is refused when the planner is made.
func TestPlannerRefusesOtherNodes(t *testing.T) {
	p, _ := h200Planner(t)
	for _, tc := range []struct{ gpus int }{{2}, {4}} {
		tp, err := topo.Synthetic("x", 1, tc.gpus, 1) // H100 GPUs
		require.NoError(t, err)
		_, err = NewPlanner(&tp.Nodes[0], p.cal, model.DefaultOptions(), 64<<20)
		assert.Error(t, err, "%d H100s", tc.gpus)
	}
}

// The load rule on the calibrated 2xH200 pair. A 2-GPU ring allgather
// round (one push out, one in, both GPUs pushing): the split shrinks
// against the idle pair's and, simulated with the contention the rule
// gives that step, is never slower than the direct copy alone at the
// step's direct rate, from 1 MiB to 1 GiB (it splits from 64 MiB, 2.5-3.6%
// on the host path where the idle pair puts 6-9%). A MultiWrite step on
// four GPUs' worth of pushes stays direct.
func TestPlannerLoadedSteps(t *testing.T) {
	p, node := h200Planner(t)
	ring := sched.Path{Load: sched.StepLoad{Out: 1, In: 1, Senders: 2}}
	splitSizes := 0
	for n := int64(1 << 20); n <= 1<<30; n *= 2 {
		idle := p.Plan(0, 1, n, sched.Path{})
		pl := p.Plan(0, 1, n, ring)
		assert.LessOrEqual(t, stagedBytes(pl), stagedBytes(idle), "%d B", n)
		if pl == nil {
			continue
		}
		splitSizes++
		paths, _, err := p.cal.PairPaths(node, 0, 1, p.o)
		require.NoError(t, err)
		loaded := model.LoadedPaths(paths, LoadOf(ring.Load))
		var c model.Contention
		for _, q := range loaded {
			if q.Staged {
				c = q.Contention
			}
		}
		res, err := pl.run(c.Gamma()) // the timing of Simulate; the bytes are checked at small sizes below
		require.NoError(t, err, "%d B", n)
		direct := loaded[0].TimeUS(float64(n), 1)
		t.Logf("%d B: staged %.2f%% (idle %.2f%%), simulated %.1f us, direct %.1f us", n, 100*float64(stagedBytes(pl))/float64(n), 100*float64(stagedBytes(idle))/float64(n), res.TotalUS, direct)
		assert.LessOrEqual(t, res.TotalUS, direct, "%d B: the split under the ring's load must not be slower than direct", n)
	}
	t.Logf("2-GPU ring round: split at %d of 11 sizes", splitSizes)
	for _, l := range []sched.StepLoad{{Out: 3, In: 3, Senders: 4}} {
		for n := int64(1 << 20); n <= 1<<30; n *= 4 {
			assert.Nil(t, p.Plan(0, 1, n, sched.Path{Load: l}), "%+v at %d B: direct only", l, n)
		}
	}
}

// The same from the programs themselves: every send of a 2-GPU ring
// allgather on the h200x2 node, annotated by sched, is planned no slower
// than its direct copy at the step's load, at 16 MiB (direct) and 256 MiB;
// the one send of a 2-GPU broadcast's root (an idle pair) gets the idle
// split.
func TestPlannerOnGeneratedPrograms(t *testing.T) {
	p, node := h200Planner(t)
	tp, err := topo.Preset("h200x2")
	require.NoError(t, err)
	sends := func(c coll.Collective, alg string, n int64, rank int) []sched.Step {
		plan, err := sched.GenerateRank(sched.Spec{Collective: c, Algorithm: alg, Topo: tp, Bytes: n, DtypeBytes: 1}, rank)
		require.NoError(t, err)
		plan.AnnotateRankLoads(rank)
		var out []sched.Step
		for _, s := range plan.Ranks[rank].Steps {
			if s.Op == sched.OpSend {
				out = append(out, s)
			}
		}
		require.NotEmpty(t, out)
		return out
	}
	paths, _, err := p.cal.PairPaths(node, 0, 1, p.o)
	require.NoError(t, err)
	split := 0
	for _, n := range []int64{16 << 20, 256 << 20} {
		for rank := range 2 {
			for _, s := range sends(coll.Allgather, "ring", n, rank) {
				pl := p.Plan(rank, 1-rank, s.Len, s.Path)
				if pl == nil {
					continue
				}
				split++
				assert.Equal(t, int64(256<<20), n, "16 MiB ring rounds stay direct")
				loaded := model.LoadedPaths(paths, LoadOf(s.Path.Load))
				res, err := pl.run(loaded[1].Contention.Gamma())
				require.NoError(t, err)
				assert.LessOrEqual(t, res.TotalUS, loaded[0].TimeUS(float64(s.Len), 1))
				assert.Less(t, stagedBytes(pl), stagedBytes(p.Plan(0, 1, s.Len, sched.Path{})), "less than the idle pair's share")
			}
		}
	}
	assert.Equal(t, 2, split, "each rank's 256 MiB round splits (a little)")
	root := sends(coll.Bcast, "knomial", 256<<20, 0)
	require.Len(t, root, 1)
	assert.Equal(t, sched.StepLoad{Out: 1, In: 0, Senders: 1}, root[0].Path.Load)
	assert.Equal(t, stagedBytes(p.Plan(0, 1, 256<<20, sched.Path{})), stagedBytes(p.Plan(0, 1, 256<<20, root[0].Path)))
	assert.Positive(t, stagedBytes(p.Plan(0, 1, 256<<20, root[0].Path)))
}
