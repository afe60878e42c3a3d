package model

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// synthetic returns OSU-style samples (1 KiB to 256 MiB, doubling, reps at
// each size) of a path with the given alpha and beta, with relative gaussian
// noise.
func synthetic(rng *rand.Rand, alphaUS, betaGBps, noise float64, reps int) []Sample {
	var out []Sample
	for b := float64(1 << 10); b <= 1<<28; b *= 2 {
		for r := 0; r < reps; r++ {
			tt := alphaUS + b/(betaGBps*1e3)
			out = append(out, Sample{Bytes: b, TimeUS: tt * (1 + noise*rng.NormFloat64())})
		}
	}
	return out
}

func TestFitHockneyExactData(t *testing.T) {
	cases := []struct{ alpha, beta float64 }{{1.5, 478}, {10, 25}, {0.2, 50}, {30, 12}}
	for i, c := range cases {
		f, err := FitHockney(synthetic(rand.New(rand.NewSource(1)), c.alpha, c.beta, 0, 1))
		require.NoError(t, err, "case %d", i)
		assert.InDelta(t, c.alpha, f.AlphaUS, 1e-6*c.alpha, "case %d", i)
		assert.InDelta(t, c.beta, f.BetaGBps, 1e-6*c.beta, "case %d", i)
		assert.Empty(t, f.Outliers, "case %d", i)
		assert.Less(t, f.RelRMS, 1e-9, "case %d", i)
	}
}

// A few samples taken while the machine was busy (several times slower), or
// timed wrongly (impossibly fast), must not move the fit, and must be the
// ones flagged. Relative weighting already tames slow outliers somewhat;
// fast ones get large weights, so for the cases marked spoilsPlain the same
// data fitted by plain weighted least squares is visibly off, which shows
// the outliers matter.
func TestFitHockneyRobustToOutliers(t *testing.T) {
	cases := []struct {
		alpha, beta float64
		seed        int64
		outliers    map[int]float64 // sample index -> factor
		spoilsPlain bool
	}{
		// Samples i*3..i*3+2 are the three repetitions of size 1 KiB << i.
		// Every repetition of the smallest size slow, plus one in the middle.
		{1.5, 380, 1, map[int]float64{0: 5, 1: 5, 2: 5, 30: 3}, false},
		// Slow large transfers (bias beta), one impossibly fast.
		{8, 51, 2, map[int]float64{51: 2, 54: 2, 55: 2, 40: 0.3}, true},
		// Scattered.
		{3, 150, 3, map[int]float64{3: 20, 4: 8, 20: 2.5, 41: 2, 56: 1.8}, false},
		// Fast small transfers (a timer that missed the startup).
		{5, 100, 4, map[int]float64{6: 0.25, 7: 0.2, 12: 0.3}, true},
	}
	for i, c := range cases {
		rng := rand.New(rand.NewSource(c.seed))
		s := synthetic(rng, c.alpha, c.beta, 0.01, 3)
		var want []int
		for j, f := range c.outliers {
			s[j].TimeUS *= f
			want = append(want, j)
		}
		f, err := FitHockney(s)
		require.NoError(t, err, "case %d", i)
		assert.InDelta(t, c.alpha, f.AlphaUS, 0.05*c.alpha, "case %d alpha", i)
		assert.InDelta(t, c.beta, f.BetaGBps, 0.01*c.beta, "case %d beta", i)
		for _, j := range want {
			assert.Contains(t, f.Outliers, j, "case %d: outlier %d not flagged", i, j)
		}
		assert.LessOrEqual(t, len(f.Outliers), len(want)+3, "case %d: too many points dropped: %v", i, f.Outliers)
		assert.Less(t, f.RelRMS, 0.02, "case %d", i)

		all := make([]bool, len(s))
		for j := range all {
			all[j] = true
		}
		a, b, ok := weightedLine(s, all)
		require.True(t, ok)
		plainAlphaErr := math.Abs(a-c.alpha) / c.alpha
		plainBetaErr := math.Abs(1/b/1e3-c.beta) / c.beta
		robustAlphaErr := math.Abs(f.AlphaUS-c.alpha) / c.alpha
		assert.LessOrEqual(t, robustAlphaErr, plainAlphaErr+0.005, "case %d: robust fit worse than plain", i)
		if c.spoilsPlain {
			assert.True(t, plainAlphaErr > 0.1 || plainBetaErr > 0.02, "case %d: the outliers should spoil a plain fit (alpha err %.3f, beta err %.3f)", i, plainAlphaErr, plainBetaErr)
		}
	}
}

func TestFitHockneyNegativeInterceptClamped(t *testing.T) {
	// Pure bandwidth with a time axis offset below zero at small sizes.
	var s []Sample
	for b := float64(1 << 20); b <= 1<<26; b *= 2 {
		s = append(s, Sample{Bytes: b, TimeUS: b/50e3 - 1})
	}
	f, err := FitHockney(s)
	require.NoError(t, err)
	assert.Zero(t, f.AlphaUS)
	assert.InDelta(t, 50, f.BetaGBps, 2)
}

func TestFitHockneyRejectsBadInput(t *testing.T) {
	cases := [][]Sample{
		nil,
		{{Bytes: 1024, TimeUS: 3}},
		{{Bytes: 1024, TimeUS: 3}, {Bytes: 1024, TimeUS: 4}},
		{{Bytes: 1024, TimeUS: 3}, {Bytes: 2048, TimeUS: 0}},
		{{Bytes: -1, TimeUS: 3}, {Bytes: 2048, TimeUS: 4}},
		{{Bytes: 1024, TimeUS: math.NaN()}, {Bytes: 2048, TimeUS: 4}},
		{{Bytes: 1024, TimeUS: 10}, {Bytes: 2048, TimeUS: 5}, {Bytes: 4096, TimeUS: 2}}, // shrinking
	}
	for i, c := range cases {
		_, err := FitHockney(c)
		assert.Error(t, err, "case %d", i)
	}
}
