package exec_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/fakedev"
	"github.com/goring-hpc/goring/exec/memtransport"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/nimble"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// moeRouting draws a routing with ranks that own no tokens, ranks that
// hold no expert, and tokens with several experts on one rank.
func moeRouting(rng *rand.Rand, n, topk int, H int64) *moe.Routing {
	experts := topk + rng.IntN(2*n+1)
	r := &moe.Routing{TokenBytes: H, TopK: topk, Tokens: make([]int, n), Placement: make([]int, experts)}
	for q := range r.Tokens {
		if q != 1 || n < 3 { // rank 1 of 3 or more owns nothing
			r.Tokens[q] = rng.IntN(12)
		}
	}
	for e := range r.Placement {
		r.Placement[e] = rng.IntN(max(1, n-1)) // the last rank of 2 or more holds no expert
	}
	for g := 0; g < r.NumTokens(); g++ {
		for _, e := range rng.Perm(experts)[:topk] {
			r.Experts = append(r.Experts, int32(e))
		}
	}
	return r
}

// dispatchReference: rank q's dst row m is the row of the token of the
// slot at m, read from its owner's src.
func dispatchReference(lay *moe.Layout, in [][]byte) [][]byte {
	H, k := lay.R.TokenBytes, int32(lay.R.TopK)
	out := make([][]byte, len(in))
	for q := range out {
		out[q] = make([]byte, 0, int64(lay.RecvRows[q])*H)
		for _, s := range lay.SlotAt[q] {
			g := int(s / k)
			o := lay.Owner(g)
			i := int64(g - lay.Base[o])
			out[q] = append(out[q], in[o][i*H:(i+1)*H]...)
		}
	}
	return out
}

func getFloat(d coll.Dtype, e []byte) float64 {
	if d == coll.Bfloat16 {
		return float64(mathFloat32frombits(uint32(binary.LittleEndian.Uint16(e)) << 16))
	}
	return float64(mathFloat32frombits(binary.LittleEndian.Uint32(e)))
}

// combineInputs writes each expert's output row times its gate weight
// (weights and values chosen so every sum is exact in bfloat16), and
// returns them with the exact per-token sums.
func combineInputs(rng *rand.Rand, lay *moe.Layout, d coll.Dtype, exact bool) (in, want [][]byte) {
	H, k := lay.R.TokenBytes, lay.R.TopK
	size := int64(d.Size())
	elems := H / size
	val := make([][]float64, len(lay.R.Experts)) // per slot
	for s := range val {
		val[s] = make([]float64, elems)
		w := []float64{1, 0.5, 0.25}[rng.IntN(3)]
		for x := range val[s] {
			if exact {
				val[s][x] = float64(rng.IntN(7)-3) * w
			} else {
				val[s][x] = rng.NormFloat64() * w
			}
		}
	}
	in = make([][]byte, len(lay.RecvRows))
	for q := range in {
		in[q] = make([]byte, int64(lay.RecvRows[q])*H)
		for m, s := range lay.SlotAt[q] {
			for x := int64(0); x < elems; x++ {
				putFloat(d, in[q][int64(m)*H+x*size:][:size], val[s][x])
			}
		}
	}
	want = make([][]byte, len(lay.RecvRows))
	for q := range want {
		want[q] = make([]byte, int64(lay.R.Tokens[q])*H)
		for i := 0; i < lay.R.Tokens[q]; i++ {
			g := lay.Base[q] + i
			for x := int64(0); x < elems; x++ {
				sum := 0.0
				for j := 0; j < k; j++ {
					// the value as stored in the input's dtype
					b := make([]byte, size)
					putFloat(d, b, val[g*k+j][x])
					sum += getFloat(d, b)
				}
				putFloat(d, want[q][int64(i)*H+x*size:][:size], sum)
			}
		}
	}
	return in, want
}

// Every dispatch and combine algorithm moves real rows over the in-memory
// transport (eager and rendezvous sends, delays, reordering) and, one case
// in three, through fake device memory: 1-8 ranks per node, 1-4 nodes,
// top-k 1-8, ranks without tokens or experts, several experts of a token
// on one rank, odd token sizes; dispatch compared byte for byte, combine
// (bfloat16 and float32, gate-weighted rows whose sums are exact) too.
func TestMoEMovesRealData(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 6))
	shapes := [][2]int{{1, 1}, {1, 2}, {1, 8}, {2, 1}, {2, 4}, {3, 3}, {4, 2}, {4, 8}}
	caseNo, devRuns := 0, 0
	for _, c := range []coll.Collective{coll.Dispatch, coll.Combine} {
		for _, alg := range sched.Algorithms(c) {
			for _, sh := range shapes {
				for _, topk := range []int{1, 3, 8} {
					caseNo++
					n := sh[0] * sh[1]
					d := coll.Uint8
					H := int64(1 + 2*rng.IntN(40)) // odd
					if c == coll.Combine {
						d = []coll.Dtype{coll.Bfloat16, coll.Float32}[caseNo%2]
						H = int64(d.Size()) * int64(1+2*rng.IntN(20))
					}
					r := moeRouting(rng, n, topk, H)
					spec := sched.Spec{Collective: c, Algorithm: alg.Name, Topo: topo.SweepShape(sh[0], sh[1]), DtypeBytes: d.Size(), Routing: r, Chunks: caseNo % 3}
					name := fmt.Sprintf("case %d: %s/%s %dx%d top-%d H=%d %v chunks=%d", caseNo, c, alg.Name, sh[0], sh[1], topk, H, d, spec.Chunks)
					plan, err := sched.Generate(spec)
					require.NoError(t, err, name)
					_, err = sched.Verify(plan)
					require.NoError(t, err, name)
					lay, err := moe.NewLayout(r)
					require.NoError(t, err)
					var in, want [][]byte
					if c == coll.Dispatch {
						in = make([][]byte, n)
						for q := range in {
							in[q] = make([]byte, int64(r.Tokens[q])*H)
							for i := range in[q] {
								in[q][i] = byte(rng.Uint32())
							}
						}
						want = dispatchReference(lay, in)
					} else {
						in, want = combineInputs(rng, lay, d, true)
					}
					mode := transportModes[caseNo%len(transportModes)]
					mode.Seed = uint64(caseNo)
					opts := []memtransport.RunOptions{{Options: mode, Timeout: 20 * time.Second}}
					if caseNo%3 == 0 {
						opts = append(opts, memtransport.RunOptions{Options: mode, Timeout: 20 * time.Second, Device: fakedev.New(uint64(caseNo)), Devices: 1 + caseNo%3})
						devRuns++
					}
					for _, o := range opts {
						got, err := memtransport.RunPlanWith(plan, d, coll.Sum, in, o)
						require.NoError(t, err, name)
						for q := range got {
							if at := firstDiff(want[q], got[q]); at >= 0 {
								t.Fatalf("%s (device %v): rank %d dst differs at byte %d of %d (want % x, got % x)", name, o.Device != nil, q, at, len(want[q]), clip(want[q], at), clip(got[q], at))
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d cases, %d of them also in fake device memory", caseNo, devRuns)
	require.Positive(t, devRuns)
}

// Combine of random float rows: the same plan gives the same bits on every
// run, whatever order the transfers complete in, and the sum is the exact
// one within rounding. nimble with a low split threshold relays rows, so
// sums are taken at relays too.
func TestMoECombineBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(99, 1))
	r, err := moe.Generate(moe.Options{NRanks: 8, TokensPerRank: 24, TokenBytes: 4 * 37, TopK: 4, Experts: 16, Hot: map[int]float64{3: 0.7}, Seed: 4})
	require.NoError(t, err)
	lay, err := moe.NewLayout(r)
	require.NoError(t, err)
	for _, d := range []coll.Dtype{coll.Float32, coll.Bfloat16} {
		r.TokenBytes = int64(d.Size()) * 37
		spec := sched.Spec{Collective: coll.Combine, Topo: topo.SweepShape(2, 4), DtypeBytes: d.Size(), Routing: r, Chunks: 2}
		plans := map[string]*sched.Plan{}
		for _, alg := range []string{"unicast", "multiwrite"} {
			spec.Algorithm = alg
			p, err := sched.Generate(spec)
			require.NoError(t, err)
			plans[alg] = p
		}
		p, _, err := sched.GenerateMoENimble(spec, nimble.MWUOptions{SplitThresholdBytes: r.TokenBytes})
		require.NoError(t, err)
		plans["nimble"] = p
		in, _ := combineInputs(rng, lay, d, false)
		for alg, plan := range plans {
			var first [][]byte
			for i, mode := range transportModes {
				mode.Seed = uint64(i + 1)
				got, err := memtransport.RunPlanWith(plan, d, coll.Sum, in, memtransport.RunOptions{Options: mode, Timeout: 20 * time.Second})
				require.NoError(t, err, alg)
				if first == nil {
					first = got
					continue
				}
				for q := range got {
					require.Equal(t, -1, firstDiff(first[q], got[q]), "%s %v: rank %d differs between runs", alg, d, q)
				}
			}
			tol := 1e-5
			if d == coll.Bfloat16 {
				tol = 0.05
			}
			size := int64(d.Size())
			for q := range first {
				for i := 0; i < r.Tokens[q]; i++ {
					g := lay.Base[q] + i
					for x := int64(0); x < r.TokenBytes/size; x++ {
						want := 0.0
						for j := 0; j < r.TopK; j++ {
							s := g*r.TopK + j
							q2 := lay.RankOf(s)
							want += getFloat(d, in[q2][int64(lay.Row[s])*r.TokenBytes+x*size:])
						}
						got := getFloat(d, first[q][int64(i)*r.TokenBytes+x*size:])
						require.InDelta(t, want, got, tol*(1+math.Abs(want)), "%s %v rank %d token %d elem %d", alg, d, q, i, x)
					}
				}
			}
		}
	}
}
