package model

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Multi-path model, eq. 8 on a case worked out by hand: alpha = (1, 3) us,
// beta = (100, 50) GB/s, n = 1e6 bytes. B = 1.5e5 B/us, sum alpha*beta =
// 2.5e5, so theta_1 = (2/3)(1 - 0.15 + 0.25) = 0.7333..., theta_2 =
// (1/3)(1 - 0.45 + 0.25) = 0.2666..., and both finish at 8.333... us.
func TestThetaDirectEq8HandCase(t *testing.T) {
	th := ThetaDirect([]float64{1, 3}, []float64{100, 50}, 1e6)
	assert.InDelta(t, 11.0/15, th[0], 1e-12)
	assert.InDelta(t, 4.0/15, th[1], 1e-12)
	t1 := DirectTimeUS(Path{Alpha1US: 1, Beta1GBps: 100}, th[0]*1e6)
	t2 := DirectTimeUS(Path{Alpha1US: 3, Beta1GBps: 50}, th[1]*1e6)
	assert.InDelta(t, 25.0/3, t1, 1e-9)
	assert.InDelta(t, 25.0/3, t2, 1e-9)
}

// Multi-path model, after eq. 11: with Omega_i = 1/beta_i and Delta_i =
// alpha_i, eq. 11 is eq. 8.
func TestThetaLinesEq11ReducesToEq8(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for c := 0; c < 200; c++ {
		p := 1 + rng.Intn(6)
		alpha, beta := make([]float64, p), make([]float64, p)
		lines := make([]Line, p)
		for i := range alpha {
			alpha[i], beta[i] = 10*rng.Float64(), 1+500*rng.Float64()
			lines[i] = DirectLine(Path{Alpha1US: alpha[i], Beta1GBps: beta[i]})
		}
		n := math.Exp(rng.Float64() * 25)
		want := ThetaDirect(alpha, beta, n)
		got := ThetaLines(lines, n, nil)
		for i := range want {
			assert.InDelta(t, want[i], got[i], 1e-9*(1+math.Abs(want[i])), "case %d path %d", c, i)
		}
	}
}

// Multi-path model, eq. 11 and 24: the shares add up to one and, where all
// are positive, every path's line reaches CommonFinishUS at its share.
func TestThetaLinesEqualFinishEq11Eq24(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	checked := 0
	for c := 0; c < 500; c++ {
		p := 1 + rng.Intn(8)
		lines := make([]Line, p)
		for i := range lines {
			lines[i] = Line{OmegaUSPerByte: 1e-6 + 1e-4*rng.Float64(), DeltaUS: 30 * rng.Float64()}
		}
		n := math.Exp(8 + rng.Float64()*14)
		th := ThetaLines(lines, n, nil)
		sum, allPos := 0.0, true
		for _, v := range th {
			sum += v
			allPos = allPos && v > 0
		}
		require.InDelta(t, 1, sum, 1e-9, "case %d", c)
		if !allPos {
			continue
		}
		checked++
		T := CommonFinishUS(lines, n)
		for i, l := range lines {
			assert.InDelta(t, T, l.At(th[i]*n), 1e-9*T, "case %d path %d", c, i)
		}
	}
	assert.Greater(t, checked, 100)
}

// Multi-path model, eq. 11 on a staged path: Omega = 1/beta + 1/beta',
// Delta = alpha + alpha' + epsilon, and the line is eq. 2 exactly.
func TestUnpipelinedLineIsEq2(t *testing.T) {
	p := Path{Alpha1US: 1, Beta1GBps: 100, Alpha2US: 2, Beta2GBps: 50, EpsilonUS: 3, Staged: true}
	l := UnpipelinedLine(p)
	assert.InDelta(t, 1/1e5+1/5e4, l.OmegaUSPerByte, 1e-18)
	assert.InDelta(t, 6, l.DeltaUS, 1e-12)
	for _, x := range []float64{1, 1e3, 1e6, 1e9} {
		assert.InDelta(t, StagedTimeUS(p, x), l.At(x), 1e-9*l.At(x))
	}
}
