package model

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomPaths draws a direct path, up to three GPU-staged paths and maybe a
// host-staged one, with startups of 0.5-20 us and bandwidths of 5-300 GB/s:
// wider than any real node, so that every branch of the solvers (dropped
// paths, either pipeline case, clamped chunk counts, a direct path worth
// dropping) is visited.
func randomPaths(rng *rand.Rand) []Path {
	u := func(lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }
	ps := []Path{{Name: DirectName, Alpha1US: u(0.5, 10), Beta1GBps: u(5, 300)}}
	for i := 0; i < rng.Intn(4); i++ {
		ps = append(ps, Path{Name: GPUStagedName(i + 2), Alpha1US: u(0.5, 10), Beta1GBps: u(5, 300),
			Alpha2US: u(0.5, 10), Beta2GBps: u(5, 300), EpsilonUS: u(0, 5), Staged: true})
	}
	if rng.Intn(2) == 0 {
		ps = append(ps, Path{Name: HostName, Alpha1US: u(1, 20), Beta1GBps: u(5, 55),
			Alpha2US: u(1, 20), Beta2GBps: u(5, 55), EpsilonUS: u(0, 20), Staged: true})
	}
	return ps
}

// randomBytes is log-uniform between 4 KiB and 1 GiB.
func randomBytes(rng *rand.Rand) int64 {
	n := int64(1) << (12 + rng.Intn(18))
	return n + rng.Int63n(n)
}

// checkSplit asserts the invariants every split must satisfy (Multi-path model
// eq. 3: 0 <= theta_i <= 1 and sum theta_i = 1; Theorem 1: used paths finish
// together; and never slower than the direct path alone).
func checkSplit(t *testing.T, tag string, paths []Path, s Split) {
	t.Helper()
	var sum int64
	var thetaSum float64
	maxT, minT := 0.0, math.Inf(1)
	for _, sh := range s.Paths {
		require.GreaterOrEqual(t, sh.Bytes, int64(0), tag)
		require.GreaterOrEqual(t, sh.Theta, 0.0, tag)
		require.LessOrEqual(t, sh.Theta, 1.0, tag)
		sum += sh.Bytes
		thetaSum += sh.Theta
		if sh.Bytes > 0 {
			require.GreaterOrEqual(t, sh.Chunks, 1, tag)
			want := sh.StartUS + sh.Path.TimeUS(float64(sh.Bytes), sh.Chunks)
			require.InDelta(t, want, sh.PredictedUS, 1e-9*want, tag)
			maxT = math.Max(maxT, sh.PredictedUS)
			minT = math.Min(minT, sh.PredictedUS)
		} else {
			require.Zero(t, sh.Chunks, tag)
		}
	}
	require.Equal(t, s.Bytes, sum, "%s: byte shares must add up to the message", tag)
	require.InDelta(t, 1, thetaSum, 1e-12, tag)
	require.InDelta(t, maxT, s.PredictedUS, 1e-12*maxT, tag)
	require.LessOrEqual(t, maxT-minT, 0.005*maxT, "%s: used paths must finish within 0.5%% of each other (%g..%g us)", tag, minT, maxT)
	if d := directIndex(paths); d >= 0 {
		alone := paths[d].TimeUS(float64(s.Bytes), 1)
		require.LessOrEqual(t, s.PredictedUS, alone*(1+1e-12), "%s: split slower than the direct path alone", tag)
		require.InDelta(t, alone, s.DirectOnlyUS, 1e-9*alone, tag)
	}
}

func TestSplitPropertiesRandomPaths(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		rng := rand.New(rand.NewSource(seed))
		o := DefaultOptions()
		for c := 0; c < 400; c++ {
			paths := randomPaths(rng)
			n := randomBytes(rng)
			for _, exact := range []bool{false, true} {
				s, err := Solve(paths, n, o, exact)
				require.NoError(t, err)
				checkSplit(t, caseTag(seed, c, n, exact), paths, s)
			}
		}
	}
}

// Without pipelining the closed form is eq. 11 exactly; the same invariants
// hold.
func TestSplitPropertiesRandomPathsUnpipelined(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	o := DefaultOptions()
	o.NoPipeline = true
	for c := 0; c < 400; c++ {
		paths := randomPaths(rng)
		n := randomBytes(rng)
		for _, exact := range []bool{false, true} {
			s, err := Solve(paths, n, o, exact)
			require.NoError(t, err)
			checkSplit(t, caseTag(7, c, n, exact), paths, s)
			for _, sh := range s.Paths {
				if sh.Bytes > 0 {
					require.Equal(t, 1, sh.Chunks)
				}
			}
		}
	}
}

// The closed form (tangent lines, integer chunks, local search over the
// used set) stays within 2% of the reference solver for 4 MiB and more, on
// parameters far wider than real nodes.
func TestClosedFormNearExactRandomPaths(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	o := DefaultOptions()
	worst := 0.0
	for c := 0; c < 600; c++ {
		paths := randomPaths(rng)
		n := int64(4<<20) + rng.Int63n(1<<30)
		cf, err := Solve(paths, n, o, false)
		require.NoError(t, err)
		ex, err := Solve(paths, n, o, true)
		require.NoError(t, err)
		// The reference is optimal over chunk counts and path subsets.
		require.LessOrEqual(t, ex.PredictedUS, cf.PredictedUS*(1+1e-9), caseTag(11, c, n, false))
		rel := cf.PredictedUS/ex.PredictedUS - 1
		worst = math.Max(worst, rel)
		require.LessOrEqual(t, rel, 0.02, caseTag(11, c, n, false))
	}
	t.Logf("worst closed-form excess over the exact solver: %.3f%%", 100*worst)
}

func caseTag(seed int64, c int, n int64, exact bool) string {
	return fmt.Sprintf("seed %d case %d bytes %d exact %v", seed, c, n, exact)
}

// The exact solver against brute force: every byte split of a small message
// between a direct and a staged path, every chunk count.
func TestExactSolverMatchesBruteForce(t *testing.T) {
	o := DefaultOptions()
	o.MinChunkBytes = 1
	o.MaxChunks = 16
	rng := rand.New(rand.NewSource(5))
	for c := 0; c < 20; c++ {
		paths := randomPaths(rng)[:1]
		paths = append(paths, Path{Name: "gpu:2", Alpha1US: 0.01 + rng.Float64(), Beta1GBps: 1 + 5*rng.Float64(),
			Alpha2US: 0.01 + rng.Float64(), Beta2GBps: 1 + 5*rng.Float64(), EpsilonUS: rng.Float64(), Staged: true})
		paths[0].Beta1GBps = 1 + 5*rng.Float64()
		paths[0].Alpha1US = 0.01 + rng.Float64()
		const n = 3000
		best := paths[0].TimeUS(n, 1) // everything direct
		for k := 1; k <= o.MaxChunks; k++ {
			best = math.Min(best, paths[1].TimeUS(n, k)) // everything staged
		}
		for x := 1; x < n; x++ {
			for k := 1; k <= o.MaxChunks && k <= x; k++ {
				// The staged path is launched after the direct one.
				tt := math.Max(paths[0].TimeUS(float64(n-x), 1), paths[0].LaunchUS()+paths[1].TimeUS(float64(x), k))
				best = math.Min(best, tt)
			}
		}
		s, err := Solve(paths, n, o, true)
		require.NoError(t, err)
		assert.InDelta(t, best, s.PredictedUS, 1e-6*best, "case %d", c)
	}
}

func TestMaxBytesBinarySearchMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for c := 0; c < 3000; c++ {
		ps := randomPaths(rng)
		p := ps[len(ps)-1]
		if !p.Staged {
			continue
		}
		lim := chunkLimits{maxChunks: 1 + rng.Intn(2048), minChunkBytes: float64(1 + rng.Intn(65536))}
		budget := 1 + 5000*rng.Float64()
		xs, ks := maxBytesByUSScan(p, budget, lim, true)
		xb, kb := maxBytesByUS(p, budget, lim, true)
		require.InDelta(t, xs, xb, 1e-9*(1+xs), "case %d (k scan %d, binary %d)", c, ks, kb)
	}
}

// Theorem 1: a path whose fixed costs exceed the common finish time of the
// others gets a negative share from eq. 24; it is dropped and the rest
// solved again, so it carries nothing and the others still add up.
func TestTheorem1DropsPathThatCannotKeepUp(t *testing.T) {
	paths := []Path{
		{Name: DirectName, Alpha1US: 2, Beta1GBps: 100},
		{Name: "gpu:2", Alpha1US: 2, Beta1GBps: 100, Alpha2US: 2, Beta2GBps: 100, EpsilonUS: 1, Staged: true},
		{Name: HostName, Alpha1US: 500, Beta1GBps: 50, Alpha2US: 500, Beta2GBps: 50, EpsilonUS: 10, Staged: true},
	}
	const n = 8 << 20 // about 84 us on the direct path alone
	// Eq. 11 over all three gives the host path a negative share.
	lines := []Line{UnpipelinedLine(paths[0]), UnpipelinedLine(paths[1]), UnpipelinedLine(paths[2])}
	th := ThetaLines(lines, n, nil)
	require.Negative(t, th[2])
	for i, exact := range []bool{false, true} {
		s, err := Solve(paths, n, DefaultOptions(), exact)
		require.NoError(t, err, "case %d", i)
		assert.Zero(t, s.Paths[2].Bytes, "case %d: host must be dropped", i)
		assert.Positive(t, s.Paths[1].Bytes, "case %d", i)
		checkSplit(t, "theorem1", paths, s)
	}
}

// Algorithm 1 line 20: paths start one after another, so a path's Delta
// includes the startups of the used paths before it. Two identical staged
// paths then get different shares: the later one starts later.
func TestLaunchOffsetsDelayLaterPaths(t *testing.T) {
	staged := Path{Alpha1US: 3, Beta1GBps: 100, Alpha2US: 3, Beta2GBps: 100, EpsilonUS: 2, Staged: true}
	a, b := staged, staged
	a.Name, b.Name = "gpu:2", "gpu:3"
	paths := []Path{{Name: DirectName, Alpha1US: 3, Beta1GBps: 100}, a, b}
	s, err := Solve(paths, 2<<20, DefaultOptions(), false)
	require.NoError(t, err)
	require.Equal(t, 3, s.Used())
	assert.Zero(t, s.Paths[0].StartUS)
	assert.Equal(t, paths[0].LaunchUS(), s.Paths[1].StartUS)
	assert.Equal(t, paths[0].LaunchUS()+paths[1].LaunchUS(), s.Paths[2].StartUS)
	assert.Greater(t, s.Paths[1].Bytes, s.Paths[2].Bytes, "the later launch must get less")
	checkSplit(t, "offsets", paths, s)
}

// Algorithm 1 lines 29-30: every other path gets the whole bytes of its
// share, the direct path the rest.
func TestRemainderGoesToDirect(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for c := 0; c < 200; c++ {
		paths := randomPaths(rng)
		n := randomBytes(rng) | 1 // odd sizes
		s, err := Solve(paths, n, DefaultOptions(), false)
		require.NoError(t, err)
		if s.Paths[0].Bytes == 0 {
			continue // the direct path itself was dropped
		}
		var others int64
		for _, sh := range s.Paths[1:] {
			others += sh.Bytes
		}
		assert.Equal(t, n-others, s.Paths[0].Bytes, "case %d", c)
	}
}

func TestSolveRejectsBadInput(t *testing.T) {
	good := []Path{{Name: DirectName, Alpha1US: 1, Beta1GBps: 10}}
	cases := []struct {
		paths []Path
		n     int64
		o     func(*Options)
	}{
		{good, 0, nil},
		{good, -5, nil},
		{nil, 100, nil},
		{[]Path{{Name: DirectName, Alpha1US: 1, Beta1GBps: 0}}, 100, nil},
		{[]Path{{Name: DirectName, Alpha1US: math.NaN(), Beta1GBps: 1}}, 100, nil},
		{[]Path{{Name: "gpu:1", Alpha1US: 1, Beta1GBps: 1, Beta2GBps: -1, Staged: true}}, 100, nil},
		{good, 100, func(o *Options) { o.MaxChunks = 0 }},
		{good, 100, func(o *Options) { o.GPUStageEpsilonUS = -1 }},
	}
	for i, c := range cases {
		o := DefaultOptions()
		if c.o != nil {
			c.o(&o)
		}
		_, err := Solve(c.paths, c.n, o, false)
		assert.Error(t, err, "case %d", i)
	}
}
