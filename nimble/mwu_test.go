package nimble

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/topo"
)

func mwuTopo(t testing.TB, preset string, nodes int) *topo.Topology {
	t.Helper()
	tp, err := topo.Preset(preset)
	require.NoError(t, err)
	tp, err = tp.Repeat(nodes)
	require.NoError(t, err)
	return tp
}

func demands(n int, set map[[2]int]int64) [][]int64 {
	m := make([][]int64, n)
	for i := range m {
		m[i] = make([]int64, n)
	}
	for k, v := range set {
		m[k[0]][k[1]] = v
	}
	return m
}

// hotMatrix: every rank sends hot bytes to rank hot and other bytes to
// every other peer (NIMBLE section V-C's hotspot traffic).
func hotMatrix(n, hotRank int, hot, other int64) [][]int64 {
	m := make([][]int64, n)
	for i := range m {
		m[i] = make([]int64, n)
		for j := range m[i] {
			m[i][j] = other
			if j == hotRank {
				m[i][j] = hot
			}
		}
	}
	return m
}

// The LP optimum of small cases on clusterB's 4-GPU NVLink mesh (150 GB/s
// per direction and pair), worked out by hand:
//
//	case 0: one pair 1->0 of D bytes. Three edge-disjoint paths (direct,
//	        via 2, via 3) each take D/3: lambda* = D/3 / 150 GB/s. The
//	        paper's Fig. 6(a) point-to-point experiment.
//	case 1: 1->0 of 2D and 2->0 of D. GPU 0's three incoming links must
//	        carry 3D, so lambda* >= D/150 GB/s, and 2->0 direct, 1->0 half
//	        direct and half via 3 attains it.
//	case 2: 1->0, 2->0, 3->0 of D each: the cut bound is D/150 GB/s and
//	        the direct paths attain it; nothing should move.
//	case 3: 1->0 of 3D and 0->1 of 3D: directions are independent links
//	        (full duplex), so each is case 0 scaled: lambda* = D/150 GB/s.
func TestMWUHandCasesMatchLPOptimum(t *testing.T) {
	const D = 96 << 20
	const capBytesPerUS = 150e3
	tp := mwuTopo(t, "clusterB", 1)
	cases := []struct {
		set       map[[2]int]int64
		optUS     float64
		wantSplit bool
	}{
		{map[[2]int]int64{{1, 0}: D}, D / 3 / capBytesPerUS, true},
		{map[[2]int]int64{{1, 0}: 2 * D, {2, 0}: D}, D / capBytesPerUS, true},
		{map[[2]int]int64{{1, 0}: D, {2, 0}: D, {3, 0}: D}, D / capBytesPerUS, false},
		{map[[2]int]int64{{1, 0}: 3 * D, {0, 1}: 3 * D}, D / capBytesPerUS, true},
	}
	for i, c := range cases {
		for _, eps := range []float64{0.1, 0.02} {
			t.Run(fmt.Sprintf("case%d_eps%g", i, eps), func(t *testing.T) {
				p, err := PlanMWU(tp, demands(4, c.set), MWUOptions{Epsilon: eps, ElemBytes: 4})
				require.NoError(t, err)
				// Stated convergence: within (1 + 2 epsilon) of the LP optimum.
				assert.LessOrEqual(t, p.MaxAfterUS, c.optUS*(1+2*eps), "case %d", i)
				assert.GreaterOrEqual(t, p.MaxAfterUS, c.optUS*(1-1e-9), "case %d: below the LP optimum means the load accounting is wrong", i)
				assert.LessOrEqual(t, p.MaxAfterUS, p.MaxBeforeUS)
				split := false
				for _, d := range p.Demands {
					split = split || d.Split()
					var sum int64
					for _, b := range d.SplitBytes {
						assert.Zero(t, b%4, "whole elements")
						sum += b
					}
					assert.Equal(t, d.Bytes, sum, "case %d: %d->%d pieces add up", i, d.Src, d.Dst)
				}
				assert.Equal(t, c.wantSplit, split, "case %d", i)
			})
		}
	}
}

// Case 0 in detail: the split approaches D/3 on each of the three paths,
// and the per-link loads say where the bytes went.
func TestMWUSinglePairEvenThirds(t *testing.T) {
	const D = 300 << 20
	tp := mwuTopo(t, "clusterB", 1)
	p, err := PlanMWU(tp, demands(4, map[[2]int]int64{{1, 0}: D}), MWUOptions{})
	require.NoError(t, err)
	d := p.Demand(1, 0)
	require.NotNil(t, d)
	require.Len(t, d.Paths, 3)
	assert.Equal(t, MWUDirect, d.Paths[0].Kind)
	assert.Equal(t, []int{1, 2, 0}, d.Paths[1].Ranks)
	assert.Equal(t, []int{1, 3, 0}, d.Paths[2].Ranks)
	for i, b := range d.SplitBytes {
		assert.InDelta(t, float64(D)/3, float64(b), float64(D)*DefaultMWUEpsilon, "path %d", i)
	}
	assert.InDelta(t, 3.0, p.MaxBeforeUS/p.MaxAfterUS, 0.1)
	assert.Equal(t, "node0 gpu:1->gpu:0", p.BottleneckBefore)
	byName := map[string]MWULink{}
	for _, l := range p.Links {
		byName[l.Name] = l
	}
	assert.Equal(t, int64(D), byName["node0 gpu:1->gpu:0"].BeforeBytes)
	assert.Equal(t, d.SplitBytes[0], byName["node0 gpu:1->gpu:0"].AfterBytes)
	assert.Equal(t, d.SplitBytes[1], byName["node0 gpu:1->gpu:2"].AfterBytes)
	assert.Equal(t, d.SplitBytes[1], byName["node0 gpu:2->gpu:0"].AfterBytes, "relay 2 forwards to 0")
	assert.Zero(t, byName["node0 gpu:0->gpu:1"].AfterBytes, "the other direction is another link")
	assert.Nil(t, p.Demand(0, 1))
}

// Uniform traffic (and anything under the threshold) stays on the default
// path: on a full mesh and across nodes, no path lowers the bottleneck.
func TestMWUUniformAndSmallStayDirect(t *testing.T) {
	cases := []struct {
		preset string
		nodes  int
		m      [][]int64
	}{
		{"clusterB", 1, hotMatrix(4, 0, 64<<20, 64<<20)},
		{"clusterB", 2, hotMatrix(8, 0, 64<<20, 64<<20)},
		{"dgx-h100", 2, hotMatrix(16, 0, 16<<20, 16<<20)},
		{"clusterB", 2, hotMatrix(8, 0, 1<<20-4, 4096)}, // hot but under 1 MiB
	}
	for i, c := range cases {
		tp := mwuTopo(t, c.preset, c.nodes)
		p, err := PlanMWU(tp, c.m, MWUOptions{ElemBytes: 4})
		require.NoError(t, err, "case %d", i)
		for _, d := range p.Demands {
			assert.False(t, d.Split(), "case %d: %s x%d: %d->%d split", i, c.preset, c.nodes, d.Src, d.Dst)
		}
		assert.Equal(t, p.MaxBeforeUS, p.MaxAfterUS, "case %d", i)
	}
}

// Hot destination across two clusterB nodes: the rail-matched paths take
// the remote traffic off GPU 0's PCIe link (where the default routes of
// rails 1-3 land) and the max link load drops to near the rail bound.
func TestMWUHotDestinationTwoNodes(t *testing.T) {
	tp := mwuTopo(t, "clusterB", 2)
	const H, U = 256 << 20, 36 << 20
	p, err := PlanMWU(tp, hotMatrix(8, 0, H, U), MWUOptions{ElemBytes: 4})
	require.NoError(t, err)
	// Node 0's four rail ports (25 GB/s each) must take what node 1 sends
	// node 0: 4 x (H + 3U) bytes.
	railBoundUS := float64(4*(H+3*U)) / (4 * 25e3)
	assert.Less(t, p.MaxAfterUS, p.MaxBeforeUS)
	assert.GreaterOrEqual(t, p.MaxAfterUS, railBoundUS*(1-1e-9))
	assert.LessOrEqual(t, p.MaxAfterUS, railBoundUS*1.05)
	assert.Contains(t, p.BottleneckBefore, "host:0->gpu:0")
	var relayed int
	for _, d := range p.Demands {
		for i, pa := range d.Paths {
			if d.SplitBytes[i] > 0 && pa.Hops() > 1 {
				relayed++
			}
			if pa.Kind == MWURail {
				assert.GreaterOrEqual(t, pa.Rail, 0)
			}
		}
	}
	assert.Positive(t, relayed)
	t.Logf("clusterB x2 hot 0: max link %.0f us (%s) -> %.0f us (%s), rail bound %.0f us", p.MaxBeforeUS, p.BottleneckBefore, p.MaxAfterUS, p.BottleneckAfter, railBoundUS)
}

// On dgx-h100 every intra-node path crosses the source's and the
// destination's NVSwitch links, so relays never help inside a node (NIMBLE,
// section VII); the planner keeps intra-node demands direct.
func TestMWUNVSwitchNoIntraRelay(t *testing.T) {
	tp := mwuTopo(t, "dgx-h100", 1)
	p, err := PlanMWU(tp, demands(8, map[[2]int]int64{{1, 0}: 256 << 20, {2, 0}: 64 << 20}), MWUOptions{})
	require.NoError(t, err)
	for _, d := range p.Demands {
		assert.False(t, d.Split(), "%d->%d", d.Src, d.Dst)
		assert.Len(t, d.Paths, 7, "direct and six relays")
	}
}

func TestMWUDeterministic(t *testing.T) {
	tp := mwuTopo(t, "clusterB", 4)
	m := hotMatrix(16, 5, 200<<20, 8<<20)
	m[3][9] = 77 << 20
	a, err := PlanMWU(tp, m, MWUOptions{})
	require.NoError(t, err)
	for i := range 3 {
		b, err := PlanMWU(tp, m, MWUOptions{})
		require.NoError(t, err)
		assert.Equal(t, a, b, "run %d", i)
	}
}

// Hysteresis keeps the plan in use unless the new one is better by more
// than the fraction.
func TestMWUHysteresis(t *testing.T) {
	tp := mwuTopo(t, "clusterB", 1)
	const D = 96 << 20
	first, err := PlanMWU(tp, demands(4, map[[2]int]int64{{1, 0}: D}), MWUOptions{})
	require.NoError(t, err)
	cases := []struct {
		set      map[[2]int]int64
		frac     float64
		wantKept bool
	}{
		// 0: same traffic, a little heavier: the old split is as good.
		{map[[2]int]int64{{1, 0}: D + 4096}, 0.1, true},
		// 1: traffic moved to 2->0: the old split (1->0 only) leaves 2->0
		// direct, a new split is 3x better, more than 10%.
		{map[[2]int]int64{{2, 0}: D}, 0.1, false},
		// 2: the same move, but the new plan must be 70% better: 3x is.
		{map[[2]int]int64{{2, 0}: D}, 0.6, false},
		// 3: 1->0 grows and 3->0 appears: the new split is better, but
		// not by the required 50%.
		{map[[2]int]int64{{1, 0}: D, {3, 0}: D / 8}, 0.5, true},
	}
	for i, c := range cases {
		p, err := PlanMWU(tp, demands(4, c.set), MWUOptions{Previous: first, HysteresisFraction: c.frac})
		require.NoError(t, err, "case %d", i)
		fresh, err := PlanMWU(tp, demands(4, c.set), MWUOptions{})
		require.NoError(t, err)
		assert.Equal(t, c.wantKept, p.Kept, "case %d: fresh %.1f us", i, fresh.MaxAfterUS)
		if c.wantKept {
			d := p.Demand(1, 0)
			require.NotNil(t, d)
			old := first.Demand(1, 0)
			for j := range d.SplitBytes {
				assert.InDelta(t, float64(old.SplitBytes[j])/float64(old.Bytes), float64(d.SplitBytes[j])/float64(d.Bytes), 1e-6, "case %d path %d keeps its share", i, j)
			}
			assert.GreaterOrEqual(t, fresh.MaxAfterUS, (1-c.frac)*p.MaxAfterUS, "case %d: kept although the new plan is better by more than the fraction", i)
		} else {
			assert.Equal(t, fresh.MaxAfterUS, p.MaxAfterUS, "case %d", i)
		}
	}
}

func TestMWURejectsBadInput(t *testing.T) {
	tp := mwuTopo(t, "clusterB", 1)
	two := mwuTopo(t, "clusterB", 2)
	prev, err := PlanMWU(two, hotMatrix(8, 0, 1<<20, 0), MWUOptions{})
	require.NoError(t, err)
	noRails := mwuTopo(t, "clusterB", 2)
	noRails.Rails = nil
	cases := []struct {
		tp   *topo.Topology
		m    [][]int64
		o    MWUOptions
		want string
	}{
		{nil, demands(4, nil), MWUOptions{}, "no topology"},
		{tp, demands(3, nil), MWUOptions{}, "3 rows, want 4"},
		{tp, [][]int64{{0, 0, 0, 0}, {0}, {0, 0, 0, 0}, {0, 0, 0, 0}}, MWUOptions{}, "row 1 has 1 entries, want 4"},
		{tp, demands(4, map[[2]int]int64{{0, 2}: -4}), MWUOptions{}, "[0][2] = -4 bytes is negative"},
		{tp, demands(4, map[[2]int]int64{{0, 2}: 6}), MWUOptions{ElemBytes: 4}, "not a whole number of 4-byte elements"},
		{tp, demands(4, nil), MWUOptions{Epsilon: 1.5}, "epsilon 1.5"},
		{tp, demands(4, nil), MWUOptions{Epsilon: -0.1}, "epsilon -0.1"},
		{tp, demands(4, nil), MWUOptions{HysteresisFraction: 1}, "hysteresis fraction 1"},
		{tp, demands(4, nil), MWUOptions{ElemBytes: -2}, "element size -2"},
		{tp, demands(4, nil), MWUOptions{Previous: prev}, "previous plan is for 8 GPUs, this one has 4"},
		{noRails, demands(8, map[[2]int]int64{{0, 5}: 4}), MWUOptions{}, "no rails"},
	}
	for i, c := range cases {
		_, err := PlanMWU(c.tp, c.m, c.o)
		require.Error(t, err, "case %d", i)
		assert.Contains(t, err.Error(), c.want, "case %d", i)
	}
}

// BenchmarkPlanMWU times one plan for a skewed matrix (hot rank 0, 50% of
// every rank's traffic) on 16 GPUs (clusterB x4) and 64 GPUs (clusterB x16
// and dgx-h100 x8).
func BenchmarkPlanMWU(b *testing.B) {
	for _, c := range []struct {
		preset string
		nodes  int
	}{{"clusterB", 4}, {"clusterB", 16}, {"dgx-h100", 8}} {
		tp := mwuTopo(b, c.preset, c.nodes)
		n := tp.NumGPUs()
		m := hotMatrix(n, 0, int64(n)*32<<20, 32<<20)
		b.Run(fmt.Sprintf("%s_x%d_%dgpus", c.preset, c.nodes, n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := PlanMWU(tp, m, MWUOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
