package calib_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/mpath"
)

// The static splits of the p2p search: pct percent of the bytes on the
// host path in the model's chunk count, the rest direct, and a plan that
// carries every byte.
func TestStaticSplit(t *testing.T) {
	o := model.DefaultOptions()
	paths := calib.P2PPaths(model.Fit{AlphaUS: 8, BetaGBps: 1400}, model.Fit{AlphaUS: 6, BetaGBps: 50}, model.Fit{AlphaUS: 6, BetaGBps: 45}, o)
	for _, n := range []int64{1<<20 + 3, 256 << 20, 1 << 30} {
		for pct := 0; pct <= 10; pct++ {
			s := calib.StaticSplit(paths, n, pct, o)
			var sum int64
			for _, sh := range s.Paths {
				sum += sh.Bytes
			}
			require.Equal(t, n, sum)
			if pct == 0 {
				assert.Len(t, s.Paths, 1)
				continue
			}
			host := s.Paths[1]
			assert.Equal(t, n*int64(pct)/100, host.Bytes)
			assert.GreaterOrEqual(t, host.Chunks, 1)
			assert.LessOrEqual(t, host.Chunks, o.MaxChunks)
			plan, err := mpath.Build(s, 64<<20)
			require.NoError(t, err)
			assert.LessOrEqual(t, plan.Paths[1].StageBytes(), int64(64<<20))
		}
	}
}

// The contention fit recovers a known slowdown from samples with noise
// and a gross outlier, and the contention-aware split then puts fewer
// bytes on the host path than the contention-free one, or none, and never
// predicts a gain that the slowed paths cannot give.
func TestContentionFitAndSplit(t *testing.T) {
	o := model.DefaultOptions()
	paths := calib.P2PPaths(model.Fit{AlphaUS: 30, BetaGBps: 1300}, model.Fit{AlphaUS: 5, BetaGBps: 54}, model.Fit{AlphaUS: 5, BetaGBps: 46}, o)
	const gamma = 0.25
	var samples []calib.P2PSample
	noise := []float64{1.01, 0.99, 1.02, 0.98, 1.0, 3.0} // the last one is an outlier
	i := 0
	for _, n := range []int64{64 << 20, 256 << 20} {
		for _, pct := range []int{1, 2, 3} {
			d := float64(n - n*int64(pct)/100)
			us := paths[0].Alpha1US + d*(1+gamma)/(paths[0].Beta1GBps*1e3)
			samples = append(samples, calib.P2PSample{Bytes: n, HostPct: pct, TimeUS: us * noise[i%len(noise)]})
			i++
		}
	}
	got := calib.FitGamma(paths, o, samples)
	assert.InDelta(t, gamma, got, 0.05, "fitted gamma")
	for _, n := range []int64{64 << 20, 1 << 30} {
		free, err := model.Solve(paths, n, o, true)
		require.NoError(t, err)
		s, err := calib.ContendedSplit(paths, n, o, got)
		require.NoError(t, err)
		alone := paths[0].Alpha1US + float64(n)/(paths[0].Beta1GBps*1e3)
		assert.LessOrEqual(t, s.PredictedUS, alone+1e-6, "never worse than the direct path alone")
		hostBytes := func(sp model.Split) int64 {
			for _, sh := range sp.Paths {
				if sh.Path.Staged {
					return sh.Bytes
				}
			}
			return 0
		}
		assert.Less(t, hostBytes(s), max(hostBytes(free), 1), "%d bytes: contention leaves less to the host path", n)
	}
	assert.Zero(t, calib.FitGamma(paths, o, nil), "no samples: no slowdown")
}

// A d2h fit whose startup came out 0 (FitHockney clamps a negative
// intercept to 0) makes eq. 14's chunk count infinite: the static split
// must then take the most chunks the limits allow, not convert +Inf to
// an int (implementation-defined: on amd64 a negative number, which the
// clamp turned into one unpipelined chunk).
func TestStaticSplitZeroStartup(t *testing.T) {
	o := model.DefaultOptions()
	// h2d faster than d2h: the first hop sets the pace (eq. 14, alpha1 in
	// the denominator).
	paths := calib.P2PPaths(model.Fit{AlphaUS: 8, BetaGBps: 1400}, model.Fit{AlphaUS: 0, BetaGBps: 45}, model.Fit{AlphaUS: 6, BetaGBps: 50}, o)
	n := int64(256 << 20)
	s := calib.StaticSplit(paths, n, 5, o)
	require.Len(t, s.Paths, 2)
	h := n * 5 / 100
	want := min(o.MaxChunks, int(h/o.MinChunkBytes))
	assert.Equal(t, want, s.Paths[1].Chunks, "alpha1 = 0: as many chunks as the limits allow")
}
