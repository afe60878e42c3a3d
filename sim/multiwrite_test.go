package sim

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// MultiWrite reproduced in the simulator. The tables these tests
// log are the numbers of docs/multiwrite.md:
//
//	go test ./sim -run Multiwrite -v

// mwSizes spans the paper's AllGather sweep (section 6.3: 256 KB to 200 MB)
// from 64 KiB to 256 MiB.
var mwSizes = []int64{64 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20}

// mwChunks are the piece counts tried per size. Every scheme is reported at
// its best count, as a tuned library would run it: relaying only pays when
// a relay forwards piece c while piece c+1 is on the wire (section 4.1's
// packet-level replication), and every piece costs a startup.
var mwChunks = []int{1, 4, 16, 64}

// linkLoad is the busiest directed link of each class in a run, in bytes:
// intra-node GPU links (nvlink, nvswitch) and NIC rail ports (a node's
// "nic" link onto its rail, and the rail's up and down ports).
type linkLoad struct {
	intra, rail int64
}

func loadsOf(res *Result) linkLoad {
	var l linkLoad
	for _, s := range res.Links {
		switch {
		case strings.Contains(s.Name, " nvlink ") || strings.Contains(s.Name, " nvswitch "):
			l.intra = max(l.intra, s.Bytes)
		case strings.Contains(s.Name, " rail") || strings.Contains(s.Name, " nic "):
			l.rail = max(l.rail, s.Bytes)
		}
	}
	return l
}

type mwRun struct {
	us     float64
	chunks int
	load   linkLoad
}

// mwAllChunks are the piece counts tried when every registered algorithm
// runs: 64 pieces of parallel_rings on 16 ranks take seconds to simulate,
// and no algorithm there gains from more than 16 (docs/multiwrite.md).
var mwAllChunks = []int{1, 4, 16}

// best runs gen for every piece count of chunks and keeps the fastest.
func best(t *testing.T, tp *topo.Topology, chunks []int, gen func(chunks int) (*sched.Plan, error)) (mwRun, error) {
	t.Helper()
	out := mwRun{us: math.Inf(1)}
	for _, k := range chunks {
		plan, err := gen(k)
		if err != nil {
			return out, err
		}
		res, err := Simulate(tp, plan, Options{})
		if err != nil {
			return out, err
		}
		if res.TotalUS < out.us {
			out = mwRun{us: res.TotalUS, chunks: k, load: loadsOf(res)}
		}
	}
	return out, nil
}

// TestMultiwriteTP4PairedRelaying: MultiWrite sections 3.1, 6.2 and 6.3. Two
// TP=4 allgathers on one ascend-8p (NPUs 0-3 and 4-7, pairs [i, i+4]):
// direct writes only (the baseline), unicast multipath and MultiWrite paired
// relaying. Section 3.1's theory: MultiWrite takes 50% of the baseline and
// 67% of unicast multipath (which takes 75%) once links dominate; the
// busiest link carries S, 3S/4 and S/2. At small sizes the relay hop's
// startup makes MultiWrite slower: the crossover of section 6.3.
func TestMultiwriteTP4PairedRelaying(t *testing.T) {
	tp := presetNodes(t, "ascend-8p", 1)
	groups := [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}
	modes := []sched.GroupedMode{sched.GroupedDirect, sched.GroupedUnicastMultipath, sched.GroupedMultiWrite}
	crossover := int64(-1)
	t.Logf("%-10s %12s %12s %12s %9s %9s  chunks(d/u/m)", "bytes", "direct_us", "unicast_us", "multiwr_us", "mw/direct", "mw/unicast")
	for i, B := range mwSizes {
		var r [3]mwRun
		for m, mode := range modes {
			var err error
			r[m], err = best(t, tp, mwChunks, func(k int) (*sched.Plan, error) {
				plan, msgs, place, err := sched.GroupedAllgather(tp, groups, B, 4, k, mode)
				if err == nil && B <= 1<<20 {
					_, err = sched.VerifyMulticast(plan, msgs, place)
				}
				return plan, err
			})
			require.NoError(t, err, "case %d: %s at %d bytes", i, mode, B)
		}
		t.Logf("%-10d %12.1f %12.1f %12.1f %9.3f %9.3f  %d/%d/%d", B, r[0].us, r[1].us, r[2].us, r[2].us/r[0].us, r[2].us/r[1].us, r[0].chunks, r[1].chunks, r[2].chunks)
		if crossover < 0 && r[2].us < r[0].us {
			crossover = B
		}
		if B == 256<<20 {
			assert.InDelta(t, 0.50, r[2].us/r[0].us, 0.05, "case %d: MultiWrite vs baseline (theory 1/2)", i)
			assert.InDelta(t, 0.75, r[1].us/r[0].us, 0.05, "case %d: unicast multipath vs baseline (theory 3/4)", i)
			assert.InDelta(t, 2.0/3, r[2].us/r[1].us, 0.05, "case %d: MultiWrite vs unicast multipath (theory 2/3)", i)
			// Bytes on the busiest HCCS link: S, 3S/4, S/2 (section 3.1).
			assert.Equal(t, B, r[0].load.intra, "case %d", i)
			assert.Equal(t, 3*B/4, r[1].load.intra, "case %d", i)
			assert.Equal(t, B/2, r[2].load.intra, "case %d", i)
		}
	}
	t.Logf("crossover: MultiWrite first beats the baseline at %d bytes per rank (paper: about 2 MB)", crossover)
	assert.Greater(t, crossover, int64(64<<10), "at 64 KiB the extra relay hop must cost more than it saves")
	assert.LessOrEqual(t, crossover, int64(4<<20))
}

// TestMultiwriteAllgatherTwoNodes: MultiWrite section 3.2 on two nodes of
// ascend-8p, clusterB and dgx-h100: every registered allgather at every
// size, in time and in bytes on the busiest rail port and intra-node link
// (at 256 MiB). MultiWrite's rail ports carry (N-1)B = B each, the least
// any allgather can (a node must receive the other node's blocks), and its
// time is at least as good as every other algorithm's at 256 MiB.
func TestMultiwriteAllgatherTwoNodes(t *testing.T) {
	for i, preset := range []string{"ascend-8p", "clusterB", "dgx-h100"} {
		tp := presetNodes(t, preset, 2)
		algs := sched.Algorithms(coll.Allgather)
		var names []string
		for _, a := range algs {
			names = append(names, a.Name)
		}
		t.Logf("%s x2 (%d ranks): time in us at the best of chunks %v; '-' = not run", preset, tp.NumGPUs(), mwAllChunks)
		t.Logf("%-10s %s", "bytes", strings.Join(names, " "))
		skipped := map[string]string{}
		for _, B := range mwSizes {
			row := fmt.Sprintf("%-10d", B)
			runs := map[string]mwRun{}
			for _, a := range algs {
				r, err := best(t, tp, mwAllChunks, func(k int) (*sched.Plan, error) {
					return sched.Generate(sched.Spec{Collective: coll.Allgather, Algorithm: a.Name, Topo: tp, Bytes: B, DtypeBytes: 4, Chunks: k})
				})
				if err != nil {
					skipped[a.Name] = err.Error()
					row += fmt.Sprintf(" %s=-", a.Name)
					continue
				}
				runs[a.Name] = r
				row += fmt.Sprintf(" %s=%.1f", a.Name, r.us)
			}
			t.Logf("%s", row)
			mw, ok := runs["multiwrite"]
			require.True(t, ok, "case %d: multiwrite must run on %s: %s", i, preset, skipped["multiwrite"])
			if B != 256<<20 {
				continue
			}
			assert.Equal(t, B, mw.load.rail, "case %d %s: one copy of each block per remote node per rail port", i, preset)
			for _, name := range names {
				r, ok := runs[name]
				if !ok {
					continue
				}
				t.Logf("  256 MiB %-20s %10.1f us  busiest rail port %6.1f MiB  busiest intra link %6.1f MiB", name, r.us, float64(r.load.rail)/(1<<20), float64(r.load.intra)/(1<<20))
				assert.GreaterOrEqual(t, r.load.rail, mw.load.rail, "case %d %s: %s", i, preset, name)
				assert.GreaterOrEqual(t, r.us, 0.99*mw.us, "case %d %s: %s beats multiwrite", i, preset, name)
			}
		}
		for _, name := range names {
			if why, ok := skipped[name]; ok {
				t.Logf("  not run: %s: %s", name, why)
			}
		}
	}
}

// TestMultiwriteBcastTwoNodes: the bcast counterpart, logged for the doc:
// MultiWrite against knomial on the same three clusters, and the root's
// rail port carrying one copy per remote node.
func TestMultiwriteBcastTwoNodes(t *testing.T) {
	for i, preset := range []string{"ascend-8p", "clusterB", "dgx-h100"} {
		tp := presetNodes(t, preset, 2)
		t.Logf("%s x2: bcast time in us (best of chunks %v)", preset, mwAllChunks)
		for _, B := range mwSizes {
			row := fmt.Sprintf("%-10d", B)
			for _, a := range sched.Algorithms(coll.Bcast) {
				r, err := best(t, tp, mwAllChunks, func(k int) (*sched.Plan, error) {
					return sched.Generate(sched.Spec{Collective: coll.Bcast, Algorithm: a.Name, Topo: tp, Bytes: B, DtypeBytes: 4, Chunks: k})
				})
				if err != nil {
					row += fmt.Sprintf(" %s=- (%.60s)", a.Name, err.Error())
					require.NotEqual(t, "multiwrite", a.Name, "case %d: %v", i, err)
					continue
				}
				row += fmt.Sprintf(" %s=%.1f", a.Name, r.us)
				if a.Name == "multiwrite" {
					assert.Equal(t, B, r.load.rail, "case %d %s: the root's port sends one copy to the one remote node", i, preset)
				}
			}
			t.Logf("%s", row)
		}
	}
}

// TestMultiwriteSixteenNodes: the same schedules on 16 dgx-h100 nodes (128
// GPUs), one piece. Bcast's binomial tree over nodes (section 4.3.3's
// recursion between relays) keeps the root's port at ceil(log2 16) = 4
// copies and beats knomial once bandwidth matters; the allgather's flat
// fan-out moves the same rail bytes as parallel_rings in two hops.
func TestMultiwriteSixteenNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 128 GPUs")
	}
	tp := presetNodes(t, "dgx-h100", 16)
	for i, c := range []struct {
		coll coll.Collective
		algs []string
	}{{coll.Bcast, []string{"knomial", "multiwrite"}}, {coll.Allgather, []string{"parallel_rings", "multiwrite"}}} {
		for _, B := range []int64{64 << 10, 2 << 20, 64 << 20} {
			us := map[string]float64{}
			var mwLoad linkLoad
			for _, a := range c.algs {
				res, _, err := Run(sched.Spec{Collective: c.coll, Algorithm: a, Topo: tp, Bytes: B, DtypeBytes: 4, Root: 5}, Options{})
				require.NoError(t, err, "case %d %s %s", i, c.coll, a)
				us[a] = res.TotalUS
				if a == "multiwrite" {
					mwLoad = loadsOf(res)
				}
			}
			t.Logf("%s %10d bytes: %s %.1f us, multiwrite %.1f us (%.2fx), busiest rail port %.2f MiB", c.coll, B, c.algs[0], us[c.algs[0]], us["multiwrite"], us[c.algs[0]]/us["multiwrite"], float64(mwLoad.rail)/(1<<20))
			if c.coll == coll.Bcast {
				assert.Equal(t, 4*B, mwLoad.rail, "case %d: the root's port sends ceil(log2 16) copies", i)
				if B >= 2<<20 {
					assert.Less(t, us["multiwrite"], us["knomial"], "case %d at %d bytes", i, B)
				}
			} else {
				assert.Equal(t, 15*B, mwLoad.rail, "case %d: (N-1)B per rail port", i)
			}
		}
	}
}
