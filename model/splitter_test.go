package model

import (
	"math"
	"math/rand"
	"testing"

	"github.com/goring-hpc/goring/topo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func presetSplitter(t testing.TB, name string, o Options) *Splitter {
	t.Helper()
	tp, err := topo.Preset(name)
	require.NoError(t, err)
	sp, err := NewSplitter(&tp.Nodes[0], o)
	require.NoError(t, err)
	return sp
}

// The acceptance test: on every preset, for every GPU pair and
// messages of 4 MiB and more, the closed form (Algorithm 1) predicts a time
// within 2% of the reference solver's, with the default threshold and with
// the threshold off (so that the split itself is compared near its onset).
func TestPresetsClosedFormWithinTwoPercentOfExact(t *testing.T) {
	sizes := []int64{4 << 20, 4<<20 + 12345, 16 << 20, 64 << 20, 256<<20 + 1, 1 << 30}
	for _, thr := range []int64{0, -1} {
		for _, name := range topo.PresetNames() {
			o := DefaultOptions()
			o.ThresholdBytes = thr
			o.DisableCache = true
			sp := presetSplitter(t, name, o)
			worst := 0.0
			for src := 0; src < sp.GPUs(); src++ {
				for dst := 0; dst < sp.GPUs(); dst++ {
					if src == dst {
						continue
					}
					paths, err := sp.Paths(src, dst)
					require.NoError(t, err)
					for _, n := range sizes {
						cf, err := sp.Split(src, dst, n, AllPaths, false)
						require.NoError(t, err)
						ex, err := sp.Split(src, dst, n, AllPaths, true)
						require.NoError(t, err)
						checkSplit(t, name, paths, cf)
						checkSplit(t, name, paths, ex)
						rel := cf.PredictedUS/ex.PredictedUS - 1
						worst = math.Max(worst, rel)
						require.LessOrEqual(t, math.Abs(rel), 0.02, "%s %d->%d %d bytes: closed %g exact %g", name, src, dst, n, cf.PredictedUS, ex.PredictedUS)
					}
				}
			}
			t.Logf("%-10s threshold %2d: worst closed-form excess %.4f%%", name, thr, 100*worst)
		}
	}
}

// On a node with spare links the split beats the direct path by a wide
// margin for large messages (Multi-path model section 5: up to the sum of the
// paths' bandwidths): clusterB's 0->1 has direct, two GPU-staged paths and
// the host path, and at 1 GiB all four carry bytes.
func TestSplitUsesAllPathsForLargeMessages(t *testing.T) {
	sp := presetSplitter(t, "clusterB", DefaultOptions())
	s, err := sp.Split(0, 1, 1<<30, AllPaths, false)
	require.NoError(t, err)
	require.Equal(t, 4, s.Used())
	assert.Less(t, s.PredictedUS, s.DirectOnlyUS/2)
	// Staged paths pipeline: more than one chunk each.
	for _, sh := range s.Paths[1:] {
		assert.Greater(t, sh.Chunks, 1, sh.Path.Name)
	}
	// Restricting the families restricts the paths.
	s, err = sp.Split(0, 1, 1<<30, PathDirect|PathHost, false)
	require.NoError(t, err)
	require.Len(t, s.Paths, 2)
	assert.Equal(t, []string{"direct", "host"}, []string{s.Paths[0].Path.Name, s.Paths[1].Path.Name})
	s, err = sp.Split(0, 1, 1<<30, PathGPU, false)
	require.NoError(t, err)
	assert.Equal(t, 2, s.Used())
	assert.Greater(t, s.PredictedUS, 0.0)
}

// The size threshold: the model's default sits where the split's gain
// first exceeds the extra startups; below it only the direct path is used.
// A set value overrides it; a negative one turns it off.
func TestSplitterThreshold(t *testing.T) {
	for _, name := range []string{"h200x2", "clusterB", "beluga"} {
		sp := presetSplitter(t, name, DefaultOptions())
		thr, err := sp.Threshold(0, 1, AllPaths)
		require.NoError(t, err)
		require.Greater(t, thr, int64(1<<10), name)
		require.Less(t, thr, int64(1<<30), name)
		paths, _ := sp.Paths(0, 1)
		assert.True(t, splitPays(paths, 0, thr, sp.Options()), "%s: pays at the threshold", name)
		assert.False(t, splitPays(paths, 0, thr-thr/1000-2, sp.Options()), "%s: not just below", name)
		below, err := sp.Split(0, 1, thr-1, AllPaths, false)
		require.NoError(t, err)
		assert.True(t, below.DirectOnly, name)
		assert.Equal(t, 1, below.Used(), name)
		above, err := sp.Split(0, 1, thr, AllPaths, false)
		require.NoError(t, err)
		assert.Greater(t, above.Used(), 1, name)
	}
	o := DefaultOptions()
	o.ThresholdBytes = 1 << 30
	sp := presetSplitter(t, "clusterB", o)
	s, err := sp.Split(0, 1, 512<<20, AllPaths, false)
	require.NoError(t, err)
	assert.True(t, s.DirectOnly)
	o.ThresholdBytes = -1
	sp = presetSplitter(t, "clusterB", o)
	thr, err := sp.Threshold(0, 1, AllPaths)
	require.NoError(t, err)
	assert.Zero(t, thr)
	// A set without the direct path has no threshold.
	sp = presetSplitter(t, "clusterB", DefaultOptions())
	thr, err = sp.Threshold(0, 1, PathGPU)
	require.NoError(t, err)
	assert.Zero(t, thr)
	// A pair whose only path is direct never splits.
	sp = presetSplitter(t, "clusterA", DefaultOptions())
	thr, err = sp.Threshold(0, 2, AllPaths)
	require.NoError(t, err)
	assert.Equal(t, int64(math.MaxInt64), thr)
}

// Algorithm 1 lines 4-6 and 32: a solved configuration is cached per (pair,
// path set, size class) and rescaled to later messages of the same class.
func TestSplitterCache(t *testing.T) {
	sp := presetSplitter(t, "clusterB", DefaultOptions())
	const n = 48 << 20
	first, err := sp.Split(0, 1, n, AllPaths, false)
	require.NoError(t, err)
	assert.False(t, first.Cached)
	again, err := sp.Split(0, 1, n, AllPaths, false)
	require.NoError(t, err)
	assert.True(t, again.Cached)
	for i := range first.Paths {
		assert.Equal(t, first.Paths[i].Bytes, again.Paths[i].Bytes, "same size, same bytes")
		assert.Equal(t, first.Paths[i].Chunks, again.Paths[i].Chunks)
	}
	assert.InDelta(t, first.PredictedUS, again.PredictedUS, 1e-9*first.PredictedUS)

	// Another size of the same class (32..64 MiB): the same paths, shares
	// recomputed for the size, bytes exact, the usual invariants, and within
	// 0.5% of a fresh solve.
	paths, _ := sp.Paths(0, 1)
	for _, m := range []int64{32 << 20, 40<<20 + 7, 64<<20 - 1} {
		require.Equal(t, SizeClass(n), SizeClass(m))
		c, err := sp.Split(0, 1, m, AllPaths, false)
		require.NoError(t, err)
		assert.True(t, c.Cached)
		checkSplit(t, "cached", paths, c)
		for i, sh := range c.Paths {
			assert.Equal(t, first.Paths[i].Bytes > 0, sh.Bytes > 0, "same paths used")
		}
		fresh, err := Solve(paths, m, DefaultOptions(), false)
		require.NoError(t, err)
		assert.InDelta(t, fresh.PredictedUS, c.PredictedUS, 0.005*fresh.PredictedUS, "rescaled config near a fresh solve at %d", m)
	}
	// Another class, another path set, another pair: not cached.
	for i, c := range []struct {
		src, dst int
		n        int64
		set      PathSet
	}{{0, 1, 64 << 20, AllPaths}, {0, 1, n, PathDirect | PathGPU}, {1, 0, n, AllPaths}} {
		s, err := sp.Split(c.src, c.dst, c.n, c.set, false)
		require.NoError(t, err)
		assert.False(t, s.Cached, "case %d", i)
	}
	// Exact answers bypass the cache.
	s, err := sp.Split(0, 1, n, AllPaths, true)
	require.NoError(t, err)
	assert.False(t, s.Cached)
	assert.True(t, s.Exact)

	// New paths for a pair (e.g. calibrated) invalidate its entries.
	cal := append([]Path(nil), paths...)
	cal[3].Beta1GBps, cal[3].Beta2GBps = 5, 5 // a host path that turned out slow
	require.NoError(t, sp.SetPaths(0, 1, cal))
	s, err = sp.Split(0, 1, n, AllPaths, false)
	require.NoError(t, err)
	assert.False(t, s.Cached)
	assert.Less(t, s.Paths[3].Theta, first.Paths[3].Theta)
	require.Error(t, sp.SetPaths(0, 1, []Path{{Name: "nvlink", Alpha1US: 1, Beta1GBps: 1}}))
	require.Error(t, sp.SetPaths(0, 0, cal))
}

func TestSplitterErrors(t *testing.T) {
	sp := presetSplitter(t, "dgx-h100", DefaultOptions())
	cases := []struct {
		src, dst int
		n        int64
		set      PathSet
		want     string
	}{
		{0, 0, 1 << 20, AllPaths, "same GPU"},
		{0, 8, 1 << 20, AllPaths, "out of range"},
		{-1, 1, 1 << 20, AllPaths, "out of range"},
		{0, 1, 0, AllPaths, "at least 1 byte"},
		{0, 1, 1 << 20, 0, "non-empty"},
		{0, 1, 1 << 20, 1 << 5, "non-empty"},
		{0, 1, 1 << 20, PathGPU, "no gpu path"}, // NVSwitch: no GPU-staged paths
	}
	for i, c := range cases {
		_, err := sp.Split(c.src, c.dst, c.n, c.set, false)
		require.Error(t, err, "case %d", i)
		assert.Contains(t, err.Error(), c.want, "case %d", i)
	}
	_, err := NewSplitter(&topo.Node{Name: "empty"}, DefaultOptions())
	assert.Error(t, err)
	_, err = NewSplitter(&topo.Node{Name: "x", GPUs: []topo.GPU{{}}}, Options{})
	assert.Error(t, err, "zero Options are rejected: start from DefaultOptions")
}

func TestSizeClass(t *testing.T) {
	cases := []struct {
		n    int64
		want uint8
	}{{1, 0}, {2, 1}, {3, 1}, {4, 2}, {1<<20 - 1, 19}, {1 << 20, 20}, {1<<20 + 1, 20}, {math.MaxInt64, 62}}
	for i, c := range cases {
		assert.Equal(t, c.want, SizeClass(c.n), "case %d", i)
	}
}

// The invariants hold for answers served from the cache too: random paths
// installed with SetPaths, one solve per size class, then other sizes of
// the class.
func TestCachedSplitPropertiesRandomPaths(t *testing.T) {
	node := mkNode([]int{0, 0}, link(topo.NVLink, "gpu:0", "gpu:1", 1, 1, 50))
	o := DefaultOptions()
	o.ThresholdBytes = -1
	sp, err := NewSplitter(node, o)
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(21))
	for c := 0; c < 300; c++ {
		paths := randomPaths(rng)
		require.NoError(t, sp.SetPaths(0, 1, paths))
		n := randomBytes(rng)
		_, err := sp.Split(0, 1, n, AllPaths, false)
		require.NoError(t, err)
		base := int64(1) << SizeClass(n)
		for j := 0; j < 3; j++ {
			m := base + rng.Int63n(base)
			s, err := sp.Split(0, 1, m, AllPaths, false)
			require.NoError(t, err)
			checkSplit(t, caseTag(21, c, m, false), paths, s)
		}
	}
}
