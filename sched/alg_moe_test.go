package sched

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/nimble"
	"github.com/goring-hpc/goring/topo"
)

// randomRouting draws a routing with the awkward cases: ranks without
// tokens, ranks without experts, several of a token's experts on one rank.
func randomRouting(rng *rand.Rand, n, topk int, H int64) *moe.Routing {
	experts := topk + rng.IntN(2*n+1)
	r := &moe.Routing{TokenBytes: H, TopK: topk, Tokens: make([]int, n), Placement: make([]int, experts)}
	for q := range r.Tokens {
		if rng.IntN(4) != 0 {
			r.Tokens[q] = rng.IntN(9)
		}
	}
	for e := range r.Placement {
		r.Placement[e] = rng.IntN(n)
		if n > 2 && r.Placement[e] == n-1 {
			r.Placement[e] = 0 // the last rank holds no expert
		}
	}
	for g := 0; g < r.NumTokens(); g++ {
		for _, e := range rng.Perm(experts)[:topk] {
			r.Experts = append(r.Experts, int32(e))
		}
	}
	return r
}

var moeShapes = [][2]int{{1, 1}, {1, 2}, {1, 5}, {1, 8}, {2, 1}, {2, 3}, {2, 4}, {3, 2}, {4, 2}, {4, 8}}

// Every MoE algorithm's plans pass the symbolic verifier over the grid:
// 1-8 ranks per node, 1-4 nodes, top-k 1-8, odd token sizes, pieces.
func TestMoEAlgorithmsVerify(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 28))
	cases := 0
	for _, c := range []coll.Collective{coll.Dispatch, coll.Combine} {
		algs := Algorithms(c)
		require.Len(t, algs, 3, "%s algorithms", c)
		for _, a := range algs {
			for si, sh := range moeShapes {
				for _, topk := range []int{1, 2, 5, 8} {
					n := sh[0] * sh[1]
					H := int64(4 * (1 + rng.IntN(9)))
					if c == coll.Dispatch && si%2 == 1 {
						H = int64(1 + 2*rng.IntN(20)) // odd token sizes move bytes
					}
					spec := Spec{Collective: c, Algorithm: a.Name, Topo: topo.SweepShape(sh[0], sh[1]),
						DtypeBytes: 4, Routing: randomRouting(rng, n, topk, H), Chunks: si % 3}
					if H%4 != 0 {
						spec.DtypeBytes = 1
					}
					name := fmt.Sprintf("%s/%s %dx%d top-%d H=%d chunks=%d", c, a.Name, sh[0], sh[1], topk, H, spec.Chunks)
					plan, err := Generate(spec)
					require.NoError(t, err, name)
					_, err = Verify(plan)
					require.NoError(t, err, name)
					cases++
				}
			}
		}
	}
	t.Logf("%d plans verified", cases)
}

// The verifier catches a wrong dispatch and a wrong combine: a delivery
// to the wrong row, a row summed twice, a row left out.
func TestMoEVerifierCatchesMistakes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	r := randomRouting(rng, 4, 3, 16)
	r.Tokens = []int{5, 4, 3, 6}
	r.Experts = r.Experts[:0]
	for g := 0; g < 18; g++ {
		for _, e := range rng.Perm(len(r.Placement))[:3] {
			r.Experts = append(r.Experts, int32(e))
		}
	}
	applied := 0
	for _, c := range []coll.Collective{coll.Dispatch, coll.Combine} {
		spec := Spec{Collective: c, Algorithm: "multiwrite", Topo: topo.SweepShape(2, 2), DtypeBytes: 4, Routing: r}
		mutations := map[string]func(p *Plan) bool{
			"shifted copy": func(p *Plan) bool {
				for q := range p.Ranks {
					for i := range p.Ranks[q].Steps {
						s := &p.Ranks[q].Steps[i]
						if s.Op == OpCopy && s.DstBuf == BufDst && s.DstOff >= 16 {
							s.DstOff -= 16
							return true
						}
					}
				}
				return false
			},
			"reduce as copy": func(p *Plan) bool {
				for q := range p.Ranks {
					for i := range p.Ranks[q].Steps {
						if s := &p.Ranks[q].Steps[i]; s.Op == OpReduce {
							s.Op = OpCopy
							return true
						}
					}
				}
				return false
			},
			"copy as reduce": func(p *Plan) bool {
				for q := range p.Ranks {
					for i := range p.Ranks[q].Steps {
						if s := &p.Ranks[q].Steps[i]; s.Op == OpCopy && s.DstBuf == BufDst {
							s.Op = OpReduce
							return true
						}
					}
				}
				return false
			},
		}
		for name, mut := range mutations {
			plan, err := Generate(spec)
			require.NoError(t, err)
			_, err = Verify(plan)
			require.NoError(t, err)
			if !mut(plan) {
				continue
			}
			applied++
			_, err = Verify(plan)
			require.Error(t, err, "%s: %s", c, name)
		}
	}
	require.GreaterOrEqual(t, applied, 4, "mutations that found a step to change")
}

// multiwrite sends a token across to a remote node once; unicast once per
// remote destination rank. Count the inter-node bytes of both against the
// routing's own count.
func TestMoEMultiwriteCrossesOncePerNode(t *testing.T) {
	r, err := moe.Generate(moe.Options{NRanks: 16, TokensPerRank: 64, TokenBytes: 7168, TopK: 8, Experts: 64, Seed: 5})
	require.NoError(t, err)
	lay, err := moe.NewLayout(r)
	require.NoError(t, err)
	var perRank, perNode int64
	var d []int
	for g := 0; g < r.NumTokens(); g++ {
		src := lay.Owner(g) / 8
		seen := map[int]bool{}
		for _, q := range lay.Dests(g, d[:0]) {
			if q/8 != src {
				perRank++
				seen[q/8] = true
			}
		}
		perNode += int64(len(seen))
	}
	for alg, want := range map[string]int64{"unicast": perRank, "multiwrite": perNode} {
		plan, err := Generate(Spec{Collective: coll.Dispatch, Algorithm: alg, Topo: topo.SweepShape(2, 8), DtypeBytes: 1, Routing: r})
		require.NoError(t, err)
		rep, err := Verify(plan)
		require.NoError(t, err)
		require.Equal(t, want*7168, rep.InterNodeBytes, alg)
	}
	require.Less(t, perNode, perRank)
}

// With a hot expert and a low split threshold, nimble relays dispatch and
// combine rows, and the plans still verify.
func TestMoENimbleSplitsHotDemand(t *testing.T) {
	r, err := moe.Generate(moe.Options{NRanks: 8, TokensPerRank: 40, TokenBytes: 64, TopK: 2, Experts: 8, Hot: map[int]float64{0: 0.8}, Seed: 9})
	require.NoError(t, err)
	for _, c := range []coll.Collective{coll.Dispatch, coll.Combine} {
		plan, mw, err := GenerateMoENimble(Spec{Collective: c, Topo: topo.SweepShape(2, 4), DtypeBytes: 4, Routing: r, Chunks: 3},
			nimble.MWUOptions{SplitThresholdBytes: 64})
		require.NoError(t, err)
		split := 0
		for _, d := range mw.Demands {
			if d.Split() {
				split++
			}
		}
		require.Positive(t, split, "the hot rank's demands must split")
		require.Less(t, mw.MaxAfterUS, mw.MaxBeforeUS)
		_, err = Verify(plan)
		require.NoError(t, err, c)
	}
}

// A rank's transfers to another node leave on its own rail (the testbed),
// so with a hot expert combine's busy sender is the hot rank: nimble plans
// combine in its own direction and moves part of that rank's reply to a
// peer of its node, whose rail carries it; dispatch's split reversed
// would leave it all on the hot rank's rail.
func TestMoENimbleCombineOffloadsTheHotSender(t *testing.T) {
	r, err := moe.Generate(moe.Options{NRanks: 4, TokensPerRank: 512, TokenBytes: 8192, TopK: 2, Experts: 8, Hot: map[int]float64{0: 0.7}, Seed: 1})
	require.NoError(t, err)
	tp, err := topo.MeasuredGPUTestbed(2, 2, 2, "1gbit", topo.TestbedRailAlphaUS)
	require.NoError(t, err)
	interNodeSent := func(alg string) []int64 {
		plan, err := Generate(Spec{Collective: coll.Combine, Algorithm: alg, Topo: tp, DtypeBytes: 2, Routing: r})
		require.NoError(t, err)
		_, err = Verify(plan)
		require.NoError(t, err, alg)
		out := make([]int64, len(plan.Ranks))
		for q := range plan.Ranks {
			for _, s := range plan.Ranks[q].Steps {
				if s.Op == OpSend && plan.Ranks[q].Node != plan.Ranks[s.Peer].Node {
					out[q] += s.Len
				}
			}
		}
		return out
	}
	uni, nim := interNodeSent("unicast"), interNodeSent("nimble")
	require.Less(t, nim[0], uni[0]*3/4, "the hot rank's own rail: unicast %v, nimble %v", uni, nim)
	require.Greater(t, nim[1], uni[1], "its node peer's rail takes the rest: unicast %v, nimble %v", uni, nim)
}

// A dispatch plan survives its JSON round trip, routing included, and
// still verifies.
func TestMoEProgramJSONRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	plan, err := Generate(Spec{Collective: coll.Combine, Algorithm: "multiwrite", Topo: topo.SweepShape(2, 2), DtypeBytes: 2, Routing: randomRouting(rng, 4, 2, 6)})
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, WriteProgram(&b, plan))
	back, err := ParseProgram([]byte(b.String()))
	require.NoError(t, err)
	require.Equal(t, plan.Routing, back.Routing)
	_, err = Verify(back)
	require.NoError(t, err)
}
