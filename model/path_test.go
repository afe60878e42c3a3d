package model

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Multi-path model, eq. 1 (Hockney) and eq. 2 (staged without pipelining),
// with the units of this package: 1 GB/s = 1e3 bytes/us.
func TestHockneyTimesEq1Eq2(t *testing.T) {
	cases := []struct {
		p      Path
		bytes  float64
		wantUS float64 // worked out by hand in the comment
	}{
		// 2 + 1e6/(50e3) = 22
		{Path{Name: DirectName, Alpha1US: 2, Beta1GBps: 50}, 1e6, 22},
		// 0.5 + 478.08e3*10/(478.08e3) = 10.5
		{Path{Name: DirectName, Alpha1US: 0.5, Beta1GBps: 478.08}, 4780800, 10.5},
		// eq. 2: 1 + 1e6/1e5 + 3 + 2 + 1e6/5e4 = 1 + 10 + 3 + 2 + 20 = 36
		{Path{Name: "gpu:2", Alpha1US: 1, Beta1GBps: 100, Alpha2US: 2, Beta2GBps: 50, EpsilonUS: 3, Staged: true}, 1e6, 36},
		// eq. 2 through host memory: 5 + 2e5/25e3 + 10 + 5 + 2e5/25e3 = 5 + 8 + 10 + 5 + 8 = 36
		{Path{Name: HostName, Alpha1US: 5, Beta1GBps: 25, Alpha2US: 5, Beta2GBps: 25, EpsilonUS: 10, Staged: true}, 2e5, 36},
		// nothing to send costs nothing (an unused path)
		{Path{Name: DirectName, Alpha1US: 2, Beta1GBps: 50}, 0, 0},
	}
	for i, c := range cases {
		assert.InDelta(t, c.wantUS, c.p.TimeUS(c.bytes, 1), 1e-9, "case %d", i)
	}
}

// Multi-path model, eq. 13: k chunks through a staged path take k times the
// slower stage plus one pass of the faster one. The cases are written out
// exactly as the paper writes them, and compared with PipelinedTimeUS,
// which picks the case by the stage times.
func TestPipelinedTimeEq13(t *testing.T) {
	eq13case1 := func(p Path, x float64, k int) float64 {
		kf := float64(k)
		return kf*(p.Alpha1US+x/kf*usPerByte(p.Beta1GBps)) + p.EpsilonUS + p.Alpha2US + x/kf*usPerByte(p.Beta2GBps)
	}
	eq13case2 := func(p Path, x float64, k int) float64 {
		kf := float64(k)
		return p.Alpha1US + x/kf*usPerByte(p.Beta1GBps) + kf*(p.EpsilonUS+p.Alpha2US+x/kf*usPerByte(p.Beta2GBps))
	}
	cases := []struct {
		p     Path
		bytes float64
		k     int
		case1 bool // which line of eq. 13 applies
	}{
		// beta1 < beta2 and big chunks: the first hop is the bottleneck.
		{Path{Alpha1US: 2, Beta1GBps: 25, Alpha2US: 2, Beta2GBps: 100, EpsilonUS: 3, Staged: true}, 64 << 20, 8, true},
		// beta1 > beta2: the second hop is the bottleneck.
		{Path{Alpha1US: 2, Beta1GBps: 100, Alpha2US: 2, Beta2GBps: 25, EpsilonUS: 3, Staged: true}, 64 << 20, 8, false},
		// Equal bandwidths: the synchronization puts the second stage behind.
		{Path{Alpha1US: 1.5, Beta1GBps: 150, Alpha2US: 1.5, Beta2GBps: 150, EpsilonUS: 3, Staged: true}, 16 << 20, 5, false},
		// beta1 < beta2 but tiny chunks: the per-chunk costs decide, and the
		// second stage (epsilon + alpha2 = 40 us) is slower; the paper's
		// beta test would pick case 1 here, the stage times pick case 2.
		{Path{Alpha1US: 1, Beta1GBps: 50, Alpha2US: 20, Beta2GBps: 100, EpsilonUS: 20, Staged: true}, 1 << 20, 64, false},
		// k = 1 is eq. 2 (both lines agree).
		{Path{Alpha1US: 1, Beta1GBps: 100, Alpha2US: 2, Beta2GBps: 50, EpsilonUS: 3, Staged: true}, 1e6, 1, true},
	}
	for i, c := range cases {
		got := PipelinedTimeUS(c.p, c.bytes, c.k)
		want := eq13case2(c.p, c.bytes, c.k)
		if c.case1 {
			want = eq13case1(c.p, c.bytes, c.k)
		}
		assert.InDelta(t, want, got, 1e-9*want, "case %d", i)
		// The time is the larger of the two lines (A_k, B_k in pipeline.go).
		assert.InDelta(t, math.Max(eq13case1(c.p, c.bytes, c.k), eq13case2(c.p, c.bytes, c.k)), got, 1e-9*got, "case %d", i)
	}
	// k = 1 equals eq. 2.
	p := cases[4].p
	assert.InDelta(t, StagedTimeUS(p, 1e6), PipelinedTimeUS(p, 1e6, 1), 1e-12)
}

func TestPathFamilies(t *testing.T) {
	cases := []struct {
		name string
		want PathSet
	}{
		{"direct", PathDirect}, {"gpu:0", PathGPU}, {"gpu:13", PathGPU}, {"host", PathHost}, {"rail:0", 0}, {"", 0},
	}
	for i, c := range cases {
		assert.Equal(t, c.want, Path{Name: c.name}.Family(), "case %d", i)
	}
	assert.Equal(t, "gpu:7", GPUStagedName(7))
}

func TestParsePathSet(t *testing.T) {
	cases := []struct {
		in   string
		want PathSet
		err  bool
	}{
		{"direct", PathDirect, false},
		{"direct,gpu,host", AllPaths, false},
		{"gpu, host", PathGPU | PathHost, false},
		{"all", AllPaths, false},
		{"direct,nvlink", 0, true},
		{"", 0, true},
		{"direct,", 0, true},
	}
	for i, c := range cases {
		got, err := ParsePathSet(c.in)
		if c.err {
			assert.Error(t, err, "case %d", i)
			continue
		}
		assert.NoError(t, err, "case %d", i)
		assert.Equal(t, c.want, got, "case %d", i)
	}
	assert.Equal(t, "direct,gpu,host", AllPaths.String())
	assert.Equal(t, "gpu", PathGPU.String())
}
