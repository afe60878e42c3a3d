package model

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var noLimits = chunkLimits{maxChunks: 1 << 30, minChunkBytes: 1e-9}

// Multi-path model, eq. 14 and 15: the real k that minimizes the eq. 13
// time is within one of the best integer k found by trying them all.
func TestOptimalChunksEq14Eq15(t *testing.T) {
	cases := []struct {
		p    Path
		x    float64
		kind PipeCase
	}{
		// eq. 14: first hop slower (beta1 < beta2).
		{Path{Alpha1US: 2, Beta1GBps: 25, Alpha2US: 1, Beta2GBps: 50, EpsilonUS: 1, Staged: true}, 256 << 20, FirstHopBound},
		{Path{Alpha1US: 10, Beta1GBps: 12, Alpha2US: 2, Beta2GBps: 50, EpsilonUS: 1, Staged: true}, 64 << 20, FirstHopBound},
		// eq. 15: second hop slower.
		{Path{Alpha1US: 2, Beta1GBps: 150, Alpha2US: 1.5, Beta2GBps: 50, EpsilonUS: 3, Staged: true}, 256 << 20, SecondHopBound},
		{Path{Alpha1US: 1.5, Beta1GBps: 150, Alpha2US: 1.5, Beta2GBps: 150, EpsilonUS: 3, Staged: true}, 64 << 20, SecondHopBound},
	}
	for i, c := range cases {
		kReal := OptimalChunksContinuous(c.p, c.x, c.kind)
		best, bestT := 1, math.Inf(1)
		for k := 1; k < 4096; k++ {
			if tt := PipelinedTimeUS(c.p, c.x, k); tt < bestT {
				best, bestT = k, tt
			}
		}
		assert.InDelta(t, kReal, float64(best), 1, "case %d", i)
		// eq. 17 / 18 is the time at the real k, a lower bound of the
		// integer optimum and very close to it.
		cont := BestTimeContinuousUS(c.p, c.x, c.kind)
		assert.LessOrEqual(t, cont, bestT*(1+1e-12), "case %d", i)
		assert.InDelta(t, bestT, cont, 1e-3*bestT, "case %d", i)
	}
}

// Multi-path model, eq. 17 and 18 are eq. 13 evaluated at eq. 14 / 15.
func TestBestTimeEq17Eq18(t *testing.T) {
	p := Path{Alpha1US: 3, Beta1GBps: 40, Alpha2US: 2, Beta2GBps: 80, EpsilonUS: 4, Staged: true}
	x := 100e6
	e := p.EpsilonUS + p.Alpha2US
	k1 := OptimalChunksContinuous(p, x, FirstHopBound)
	case1 := k1*p.Alpha1US + x*usPerByte(p.Beta1GBps) + e + x/(k1*bytesPerUS(p.Beta2GBps))
	assert.InDelta(t, case1, BestTimeContinuousUS(p, x, FirstHopBound), 1e-9*case1)
	k2 := OptimalChunksContinuous(p, x, SecondHopBound)
	case2 := p.Alpha1US + x/(k2*bytesPerUS(p.Beta1GBps)) + k2*e + x*usPerByte(p.Beta2GBps)
	assert.InDelta(t, case2, BestTimeContinuousUS(p, x, SecondHopBound), 1e-9*case2)
}

// Multi-path model, eq. 19-22, as derived in docs/model.md: at an interior
// optimum the phi line is the tangent of the best-time curve (eq. 17 / 18)
// at the operating point, lies above it everywhere else (AM-GM), is eq. 22
// written with phi, and phi*sqrt(x0) does not depend on x0 (phi =
// C/sqrt(n)).
func TestTangentPhiEq19To22(t *testing.T) {
	cases := []struct {
		p    Path
		kind PipeCase
	}{
		{Path{Alpha1US: 2, Beta1GBps: 25, Alpha2US: 1, Beta2GBps: 50, EpsilonUS: 1, Staged: true}, FirstHopBound},
		{Path{Alpha1US: 2, Beta1GBps: 150, Alpha2US: 1.5, Beta2GBps: 50, EpsilonUS: 3, Staged: true}, SecondHopBound},
		{Path{Alpha1US: 2, Beta1GBps: 50, Alpha2US: 2, Beta2GBps: 50, EpsilonUS: 10, Staged: true}, SecondHopBound},
	}
	for i, c := range cases {
		var phiRoot []float64
		for _, x0 := range []float64{16 << 20, 64 << 20, 256 << 20, 1 << 30} {
			tg := PipelineTangent(c.p, x0, noLimits)
			require.Equal(t, c.kind, tg.Case, "case %d x0 %g", i, x0)
			best := BestTimeContinuousUS(c.p, x0, c.kind)
			assert.InDelta(t, best, tg.Line.At(x0), 1e-9*best, "case %d: touches at x0", i)
			for _, f := range []float64{0.25, 0.5, 0.9, 1.1, 2, 4} {
				assert.GreaterOrEqual(t, tg.Line.At(f*x0), BestTimeContinuousUS(c.p, f*x0, c.kind)*(1-1e-12), "case %d: above elsewhere", i)
			}
			// eq. 22 with phi.
			b1, b2 := bytesPerUS(c.p.Beta1GBps), bytesPerUS(c.p.Beta2GBps)
			e := c.p.EpsilonUS + c.p.Alpha2US
			var omega, delta float64
			if c.kind == FirstHopBound {
				omega, delta = 1/b1+tg.Phi/b2, e+c.p.Alpha1US/tg.Phi
			} else {
				omega, delta = tg.Phi/b1+1/b2, c.p.Alpha1US+e/tg.Phi
			}
			assert.InDelta(t, omega, tg.Line.OmegaUSPerByte, 1e-12*omega, "case %d", i)
			assert.InDelta(t, delta, tg.Line.DeltaUS, 1e-9*delta, "case %d", i)
			// eq. 19: k = phi * x / (alpha*beta') is the eq. 14/15 k at x0.
			var k float64
			if c.kind == FirstHopBound {
				k = tg.Phi * x0 / (c.p.Alpha1US * b2)
			} else {
				k = tg.Phi * x0 / (e * b1)
			}
			assert.InDelta(t, OptimalChunksContinuous(c.p, x0, c.kind), k, 1e-9*k, "case %d", i)
			phiRoot = append(phiRoot, tg.Phi*math.Sqrt(x0))
		}
		for _, v := range phiRoot[1:] {
			assert.InDelta(t, phiRoot[0], v, 1e-9*phiRoot[0], "case %d: phi*sqrt(n) constant", i)
		}
	}
}

// When the best chunk count at x0 would be below one, the tangent is the
// one-chunk line (eq. 11), not a fixed-chunk-size line.
func TestTangentClampedToOneChunk(t *testing.T) {
	p := Path{Alpha1US: 10, Beta1GBps: 200, Alpha2US: 10, Beta2GBps: 200, EpsilonUS: 5, Staged: true}
	tg := PipelineTangent(p, 64<<10, DefaultOptions().limits())
	assert.Equal(t, UnpipelinedLine(p), tg.Line)
	assert.Equal(t, float64(64<<10), tg.ChunkBytes)
}

// The fixed-k line is the exact pipelined time at the point it is taken.
func TestFixedChunksLineIsExact(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for c := 0; c < 1000; c++ {
		ps := randomPaths(rng)
		p := ps[len(ps)-1]
		if !p.Staged {
			continue
		}
		x := math.Exp(8 + 13*rng.Float64())
		k := 1 + rng.Intn(64)
		want := PipelinedTimeUS(p, x, k)
		assert.InDelta(t, want, FixedChunksLine(p, k, x).At(x), 1e-9*want, "case %d", c)
	}
}

// integerChunks picks the better of the whole numbers around the real
// optimum; it is never worse than a full search by more than a hair.
func TestIntegerChunksNearBest(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	lim := DefaultOptions().limits()
	for c := 0; c < 500; c++ {
		ps := randomPaths(rng)
		p := ps[len(ps)-1]
		if !p.Staged {
			continue
		}
		x := math.Exp(10 + 11*rng.Float64())
		k := integerChunks(p, x, lim)
		kb := bestChunks(p, x, lim, true)
		assert.LessOrEqual(t, p.TimeUS(x, k), p.TimeUS(x, kb)*1.001, "case %d (k %d, best %d)", c, k, kb)
	}
}
