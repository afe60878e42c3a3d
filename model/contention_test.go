package model

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The 2xH200 figures of docs/gpu.md ("Reference figures"): one peer copy
// at 390 GB/s, the host-staged pipeline at 51 GB/s in 8 MiB chunks.
func h200Direct() Path { return MeasuredDirectPath(10, 390) }
func h200Host() Path {
	return MeasuredStagedPath(HostName, 51, 8<<20, DefaultOptions().HostStageEpsilonUS)
}

func TestMeasuredStagedPathReproducesMeasuredRate(t *testing.T) {
	h := h200Host()
	require.True(t, h.valid())
	assert.Equal(t, h.Beta1GBps, h.Beta2GBps)
	assert.Greater(t, h.Beta1GBps, 51.0, "the hops are faster than the pipeline: epsilon per chunk is on top")
	// At the measured chunk the line's slope is the measured bandwidth.
	const c = 8 << 20
	t1, t2 := h.TimeUS(32*c, 32), h.TimeUS(64*c, 64)
	assert.InEpsilon(t, 51, 32*c/(t2-t1)/1e3, 1e-9)
	// Unknown chunk: the hops carry the measured rate and epsilon is paid
	// on top. An epsilon that leaves no time for the bytes: epsilon 0.
	unknown := MeasuredStagedPath(HostName, 51, 0, 10)
	assert.Equal(t, 51.0, unknown.Beta1GBps)
	assert.Equal(t, 10.0, unknown.EpsilonUS)
	tooBig := MeasuredStagedPath(HostName, 51, 1000, 100)
	assert.Equal(t, 51.0, tooBig.Beta1GBps)
	assert.Zero(t, tooBig.EpsilonUS)
}

func TestContendedPaths(t *testing.T) {
	g := Path{Name: "gpu:2", Staged: true, Alpha1US: 1, Beta1GBps: 100, Alpha2US: 1, Beta2GBps: 80, Contention: Contention{DirectSlowdown: 0.1, StagedSlowdown: 0.5}}
	h := h200Host()
	h.Contention = Contention{DirectSlowdown: 0.2, StagedSlowdown: 0.25}
	paths := []Path{h200Direct(), g, h}
	all := contendedPaths(paths, []bool{true, true, true}, nil)
	assert.InDelta(t, 390*0.9*0.8, all[0].Beta1GBps, 1e-9)
	assert.InDelta(t, 50.0, all[1].Beta1GBps, 1e-9)
	assert.InDelta(t, 40.0, all[1].Beta2GBps, 1e-9)
	assert.InDelta(t, h.Beta1GBps*0.75, all[2].Beta1GBps, 1e-9)
	one := contendedPaths(paths, []bool{true, false, true}, all)
	assert.InDelta(t, 390*0.8, one[0].Beta1GBps, 1e-9)
	assert.Equal(t, g, one[1], "an unused path is unchanged")
	// Without the direct path the staged paths run at their own rates.
	none := contendedPaths(paths, []bool{false, true, true}, nil)
	assert.Equal(t, paths, none)
	assert.Equal(t, 390.0, paths[0].Beta1GBps, "the input is not modified")
}

// OverlapTimeUS against the two-phase time worked out by hand: both paths
// run contended until the first is done, the other finishes at its own rate.
func TestOverlapTimeTwoPhases(t *testing.T) {
	d := Path{Name: DirectName, Beta1GBps: 400} // no startup: both launch at 0
	h := Path{Name: HostName, Staged: true, Beta1GBps: 50, Beta2GBps: 50, Contention: Contention{DirectSlowdown: 0.1, StagedSlowdown: 0.4}}
	const n = 100e6
	solo := func(p Path, x float64, k int) float64 { return p.TimeUS(x, k) }
	paths := []Path{d, h}
	for i, c := range []struct {
		share float64
		k     int
	}{{0.04, 8}, {0.06, 8}, {0.12, 8}, {0.2, 1}} {
		xd, xs := n*(1-c.share), n*c.share
		eff := contendedPaths(paths, []bool{true, true}, nil)
		td, ts := solo(eff[0], xd, 1), solo(eff[1], xs, c.k)
		var want float64
		if ts <= td { // staged first, then the direct path alone
			want = ts + (1-ts/td)*solo(d, xd, 1)
		} else {
			want = td + (1-td/ts)*solo(h, xs, c.k)
		}
		got := OverlapTimeUS(paths, []float64{xd, xs}, []int{1, c.k})
		assert.InEpsilon(t, want, got, 1e-9, "case %d", i)
		// Never faster than both at their contended rates, never slower
		// than the sum of both alone.
		assert.GreaterOrEqual(t, got, math.Min(td, ts)*(1-1e-12), "case %d", i)
	}
	// Without contention: the later path's own time, launch offsets included.
	d.Alpha1US = 7
	h.Contention = Contention{}
	got := OverlapTimeUS([]Path{d, h}, []float64{90e6, 10e6}, []int{1, 4})
	assert.InEpsilon(t, math.Max(d.TimeUS(90e6, 1), 7+h.TimeUS(10e6, 4)), got, 1e-12)
	// One path alone is its own time; nothing at all is 0.
	assert.InEpsilon(t, d.TimeUS(5e6, 1), OverlapTimeUS([]Path{d, h}, []float64{5e6, 0}, []int{1, 0}), 1e-12)
	assert.Zero(t, OverlapTimeUS([]Path{d, h}, []float64{0, 0}, []int{0, 0}))
}

// With the contention of the H200 measurements the split sends a smaller
// share over the host path than the independent model, both solvers agree,
// and the prediction of the chosen split is what OverlapTimeUS says of it.
func TestSolveUsesContention(t *testing.T) {
	const n = 256 << 20
	o := DefaultOptions()
	free := []Path{h200Direct(), h200Host()}
	cont := []Path{h200Direct(), h200Host()}
	cont[1].Contention = Contention{DirectSlowdown: 0.02, StagedSlowdown: 0.35}

	fs, err := Solve(free, n, o, false)
	require.NoError(t, err)
	cs, err := Solve(cont, n, o, false)
	require.NoError(t, err)
	ce, err := Solve(cont, n, o, true)
	require.NoError(t, err)
	require.Equal(t, 2, cs.Used())
	assert.Less(t, cs.Paths[1].Theta, fs.Paths[1].Theta-0.02, "contention moves bytes back to the direct path")
	assert.Greater(t, cs.PredictedUS, fs.PredictedUS)
	assert.InEpsilon(t, ce.PredictedUS, cs.PredictedUS, 0.02, "closed form within 2%% of the reference solver")
	assert.InDelta(t, ce.Paths[1].Theta, cs.Paths[1].Theta, 0.01)
	bytes := []float64{float64(cs.Paths[0].Bytes), float64(cs.Paths[1].Bytes)}
	chunks := []int{cs.Paths[0].Chunks, cs.Paths[1].Chunks}
	assert.InEpsilon(t, cs.PredictedUS, OverlapTimeUS(cont, bytes, chunks), 0.005)

	// A staged path that costs the direct path more than it carries is
	// not used.
	cont[1].Contention = Contention{DirectSlowdown: 0.2}
	s, err := Solve(cont, n, o, false)
	require.NoError(t, err)
	assert.True(t, s.DirectOnly)
	assert.Equal(t, 1, s.Used())

	// Contention is carried by SetPaths and used by the cache too.
	sp := presetSplitter(t, "h200x2", o)
	cont[1].Contention = Contention{DirectSlowdown: 0.02, StagedSlowdown: 0.35}
	require.NoError(t, sp.SetPaths(0, 1, cont))
	a, err := sp.Split(0, 1, n, AllPaths, false)
	require.NoError(t, err)
	b, err := sp.Split(0, 1, n+12345, AllPaths, false)
	require.NoError(t, err)
	require.True(t, b.Cached)
	assert.InDelta(t, cs.Paths[1].Theta, a.Paths[1].Theta, 1e-9)
	assert.InDelta(t, a.Paths[1].Theta, b.Paths[1].Theta, 0.002)

	bad := []Path{h200Direct(), h200Host()}
	bad[1].Contention.StagedSlowdown = 1
	_, err = Solve(bad, n, o, false)
	require.Error(t, err)
}

// The two parametrisations of one slowdown agree: a lost fraction s and
// its gamma slow a rate to the same figure, and each converts back.
func TestSlowdownAndGammaAgree(t *testing.T) {
	for _, s := range []float64{0, 0.03, 0.25, 0.3, 0.5, 0.95} {
		g := GammaOfSlowdown(s)
		assert.InDelta(t, s, SlowdownOfGamma(g), 1e-15, "s %g", s)
		assert.InEpsilon(t, SlowedRate(390, s), GammaSlowedRate(390, g), 1e-14, "s %g, gamma %g", s, g)
		c := Contention{DirectSlowdown: s, StagedSlowdown: s / 2}
		back := c.Gamma().Slowdowns()
		assert.InDelta(t, c.DirectSlowdown, back.DirectSlowdown, 1e-15)
		assert.InDelta(t, c.StagedSlowdown, back.StagedSlowdown, 1e-15)
	}
	// The H200 reading of docs/model.md: the host path at 70% of its rate
	// is a lost fraction of 0.3 and a gamma of 1/0.7 - 1.
	assert.InDelta(t, 1/0.7-1, GammaOfSlowdown(0.3), 1e-15)
	assert.Equal(t, GammaContention{}, Contention{}.Gamma(), "no contention either way")
}
