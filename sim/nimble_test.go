package sim

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/nimble"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// Reproduction of NIMBLE (NIMBLE) in the simulator; docs/nimble.md
// copies the logged tables. Three plans per traffic matrix:
//
//   - pairwise: the lock-stepped baseline (the NIMBLE paper's MPI-style reference);
//   - nimble-direct: nimble with the split disabled (threshold above every
//     demand): the same all-at-once schedule on the default paths, so the
//     difference to nimble is the routing alone, not the schedule;
//   - nimble: the MWU split.

// hotCounts is `goring --hot R:F --bytes N` (bench.HotCounts): every rank
// sends N*P bytes, fraction F of it to rank hot and the rest evenly to the
// others, rounded down to elements of elem bytes.
func hotCounts(n int, bytes int64, hot int, frac float64, elem int64) [][]int64 {
	m := make([][]int64, n)
	total := int64(n) * bytes
	for i := range m {
		m[i] = make([]int64, n)
		toHot := int64(frac * float64(total))
		rest := total - toHot
		m[i][hot] = toHot
		for j, k := 0, int64(0); j < n; j++ {
			if j == hot {
				continue
			}
			m[i][j] = rest / int64(n-1)
			if k < rest%int64(n-1) {
				m[i][j]++
			}
			k++
		}
		for j := range m[i] {
			m[i][j] -= m[i][j] % elem
		}
	}
	return m
}

type nimbleRun struct {
	pairwiseUS, directUS, nimbleUS float64
	// Max link busy time at full rate, from the simulator's link loads.
	pairwiseLinkUS, nimbleLinkUS float64
	mwu                          *nimble.MWUPlan
}

func maxLinkUS(res *Result) float64 {
	m := 0.0
	for _, l := range res.Links {
		m = math.Max(m, l.Utilisation*res.TotalUS)
	}
	return m
}

func runNimble(t *testing.T, tp *topo.Topology, counts [][]int64) nimbleRun {
	t.Helper()
	spec := sched.Spec{Collective: coll.Alltoallv, Topo: tp, DtypeBytes: 4, Counts: counts}
	var out nimbleRun
	spec.Algorithm = "pairwise"
	res, _, err := Run(spec, Options{})
	require.NoError(t, err)
	out.pairwiseUS, out.pairwiseLinkUS = res.TotalUS, maxLinkUS(res)

	direct, _, err := sched.GenerateNimble(spec, nimble.MWUOptions{SplitThresholdBytes: math.MaxInt64})
	require.NoError(t, err)
	_, err = sched.Verify(direct)
	require.NoError(t, err)
	res, err = Simulate(tp, direct, Options{})
	require.NoError(t, err)
	out.directUS = res.TotalUS

	plan, mp, err := sched.GenerateNimble(spec, nimble.MWUOptions{})
	require.NoError(t, err)
	_, err = sched.Verify(plan)
	require.NoError(t, err)
	res, err = Simulate(tp, plan, Options{})
	require.NoError(t, err)
	out.nimbleUS, out.nimbleLinkUS, out.mwu = res.TotalUS, maxLinkUS(res), mp
	return out
}

func presetNodes(t *testing.T, name string, nodes int) *topo.Topology {
	t.Helper()
	tp, err := topo.Preset(name)
	require.NoError(t, err)
	tp, err = tp.Repeat(nodes)
	require.NoError(t, err)
	return tp
}

// TestReproNimbleHotspotAlltoallv: NIMBLE section V-C (Fig. 7), 8 GPUs on
// two nodes and the other topologies, --hot 0:F --bytes 64MiB. Claims
// checked: no split (and so no change) for uniform traffic or under the
// 1 MiB threshold; for hot traffic the routing never makes the plan slower
// than the same schedule on default paths, and it lowers the planner's and
// the simulator's max link load where the default routes leave links idle.
func TestReproNimbleHotspotAlltoallv(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 64 MiB alltoallv on 8 and 16 GPUs")
	}
	type cfg struct {
		preset string
		nodes  int
		bytes  int64
		frac   float64 // < 0: uniform
	}
	var cfgs []cfg
	for _, top := range []struct {
		preset string
		nodes  int
	}{{"clusterB", 2}, {"dgx-h100", 1}, {"dgx-h100", 2}} {
		for _, f := range []float64{-1, 0.25, 0.5, 0.9} {
			cfgs = append(cfgs, cfg{top.preset, top.nodes, 64 << 20, f})
		}
		cfgs = append(cfgs, cfg{top.preset, top.nodes, 16 << 10, 0.9}) // hot pairs of P*16 KiB*0.9 < 1 MiB
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-11s %5s %6s | %11s %11s %11s | %7s %7s | %11s %11s | %11s %11s | %s\n",
		"topology", "hot", "bytes", "pairwise_us", "direct_us", "nimble_us", "pw/nim", "dir/nim", "mwu_bef_us", "mwu_aft_us", "sim_pw_link", "sim_nim_link", "split")
	for i, c := range cfgs {
		tp := presetNodes(t, c.preset, c.nodes)
		n := tp.NumGPUs()
		counts := sched.UniformCounts(n, c.bytes)
		hot := "unif"
		if c.frac >= 0 {
			counts, hot = hotCounts(n, c.bytes, 0, c.frac, 4), fmt.Sprintf("%.2f", c.frac)
		}
		r := runNimble(t, tp, counts)
		split := 0
		for _, d := range r.mwu.Demands {
			if d.Split() {
				split++
			}
		}
		fmt.Fprintf(&b, "%-11s %5s %6s | %11.0f %11.0f %11.0f | %7.2f %7.2f | %11.0f %11.0f | %11.0f %11.0f | %d/%d\n",
			fmt.Sprintf("%s x%d", c.preset, c.nodes), hot, units(c.bytes), r.pairwiseUS, r.directUS, r.nimbleUS,
			r.pairwiseUS/r.nimbleUS, r.directUS/r.nimbleUS, r.mwu.MaxBeforeUS, r.mwu.MaxAfterUS, r.pairwiseLinkUS, r.nimbleLinkUS, split, len(r.mwu.Demands))
		// The planner's link model is the simulator's: its max link busy
		// time before and after is what the simulator's link loads give.
		assert.InEpsilon(t, r.mwu.MaxBeforeUS, r.pairwiseLinkUS, 1e-3, "case %d: planner vs simulator, default routes", i)
		assert.InEpsilon(t, r.mwu.MaxAfterUS, r.nimbleLinkUS, 1e-3, "case %d: planner vs simulator, split", i)
		uniformOrSmall := c.frac < 0 || c.bytes*int64(n) < nimble.DefaultSplitThresholdBytes
		if uniformOrSmall {
			assert.Zero(t, split, "case %d: nothing splits", i)
			assert.InDelta(t, r.directUS, r.nimbleUS, 1e-6*r.directUS, "case %d: same plan, same time", i)
			continue
		}
		assert.LessOrEqual(t, r.mwu.MaxAfterUS, r.mwu.MaxBeforeUS, "case %d", i)
		assert.LessOrEqual(t, r.nimbleUS, r.directUS*1.02, "case %d: the split does not slow the schedule down", i)
	}
	t.Log("\n" + b.String())
}

func units(b int64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%dM", b>>20)
	case b >= 1<<10:
		return fmt.Sprintf("%dK", b>>10)
	}
	return fmt.Sprint(b)
}

// TestReproNimblePointToPoint: NIMBLE section V-B (Fig. 6 a, b): one GPU
// pair moving 256 MiB. Inside a clusterB node the split adds the two
// 2-hop paths (the paper: 120 GB/s direct, 213 with one relay, 278 with
// two); across two clusterB nodes it adds the three other rails (the
// paper: near-linear in the NIC count, 4 NICs about 3.8x one). On an
// NVSwitch node (dgx-h100) nothing can be gained inside the node (section
// VII).
func TestReproNimblePointToPoint(t *testing.T) {
	const bytes = 256 << 20
	cases := []struct {
		preset     string
		nodes      int
		src, dst   int
		minSpeedup float64
		maxSpeedup float64
	}{
		{"clusterB", 1, 1, 0, 2.5, 3.05},  // 3 NVLink paths
		{"clusterB", 2, 0, 4, 3.5, 4.05},  // 4 rails
		{"dgx-h100", 1, 1, 0, 0.99, 1.01}, // NVSwitch: no relay helps
		{"dgx-h100", 2, 0, 8, 5.5, 8.05},  // 8 rails, two relays fill the pipe
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-11s %7s | %12s %12s %8s\n", "topology", "pair", "direct_GBps", "nimble_GBps", "speedup")
	for i, c := range cases {
		tp := presetNodes(t, c.preset, c.nodes)
		n := tp.NumGPUs()
		counts := sched.UniformCounts(n, 0)
		counts[c.src][c.dst] = bytes
		r := runNimble(t, tp, counts)
		directGBps, nimbleGBps := bytes/r.directUS/1e3, bytes/r.nimbleUS/1e3
		fmt.Fprintf(&b, "%-11s %3d->%-3d | %12.1f %12.1f %8.2f\n", fmt.Sprintf("%s x%d", c.preset, c.nodes), c.src, c.dst, directGBps, nimbleGBps, nimbleGBps/directGBps)
		assert.GreaterOrEqual(t, nimbleGBps/directGBps, c.minSpeedup, "case %d", i)
		assert.LessOrEqual(t, nimbleGBps/directGBps, c.maxSpeedup, "case %d", i)
	}
	t.Log("\n" + b.String())
}
