package exec_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/fakedev"
	"github.com/goring-hpc/goring/exec/memtransport"
	"github.com/goring-hpc/goring/exec/reduce"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
	"github.com/stretchr/testify/require"
)

type shape struct{ nodes, gpus int }

// Shapes from 2 to 64 ranks: single nodes, several small nodes, odd
// counts, and the two 64-rank layouts.
var (
	fullShapes  = []shape{{1, 2}, {1, 3}, {2, 1}, {2, 2}, {3, 1}, {1, 5}, {3, 2}, {2, 4}, {3, 3}, {4, 4}, {5, 3}, {8, 4}, {16, 4}, {8, 8}}
	shortShapes = []shape{{1, 2}, {1, 3}, {2, 2}, {3, 2}, {2, 4}, {4, 4}, {16, 4}}
)

// reductionCases is every (dtype, op) pair UCC defines.
func reductionCases() (out [][2]int) {
	for _, d := range coll.Dtypes {
		for _, o := range coll.Ops {
			if coll.Supports(o, d) {
				out = append(out, [2]int{int(d), int(o)})
			}
		}
	}
	return out
}

// fillInput writes rank r's input of a reduction so that any order of
// reduction gives the same bits: integers take random bits (wraparound
// arithmetic is associative and commutative), floats small integers whose
// sums over 64 ranks stay exact even in bfloat16 (|x| <= 3), products
// powers of two of at most one rank per element, and min/max never meet
// +0 against -0.
func fillInput(rng *rand.Rand, d coll.Dtype, o coll.Op, r, n int, b []byte) {
	size := d.Size()
	for k := 0; k*size < len(b); k++ {
		e := b[k*size : (k+1)*size]
		if !d.IsFloat() {
			v := rng.Uint64()
			if (o == coll.Land || o == coll.Lor) && rng.IntN(3) == 0 {
				v = 0
			}
			putUint(e, v)
			continue
		}
		var v float64
		switch o {
		case coll.Prod:
			v = float64(1 - 2*rng.IntN(2))
			if (k+r)%n == 0 {
				v *= 2
			}
		case coll.Land, coll.Lor:
			v = float64(rng.IntN(3)) // 0 one time in three
		case coll.Min, coll.Max:
			v = float64(rng.IntN(13) - 6)
			if v == 0 {
				v = 0.5
			}
		default:
			v = float64(rng.IntN(7) - 3)
		}
		putFloat(d, e, v)
	}
}

func putUint(e []byte, v uint64) {
	switch len(e) {
	case 1:
		e[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(e, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(e, uint32(v))
	default:
		binary.LittleEndian.PutUint64(e, v)
	}
}

func putFloat(d coll.Dtype, e []byte, v float64) {
	switch d {
	case coll.Float16:
		binary.LittleEndian.PutUint16(e, reduce.Float32ToHalf(float32(v)))
	case coll.Bfloat16:
		binary.LittleEndian.PutUint16(e, reduce.Float32ToBFloat16(float32(v)))
	case coll.Float32:
		binary.LittleEndian.PutUint32(e, math.Float32bits(float32(v)))
	default:
		binary.LittleEndian.PutUint64(e, math.Float64bits(v))
	}
}

// reduceAll is the reference reduction of parts, in rank order, with the
// host kernels of package reduce (checked on their own against a
// per-element reference in exec/reduce).
func reduceAll(t *testing.T, d coll.Dtype, o coll.Op, parts [][]byte) []byte {
	acc := append([]byte{}, parts[0]...)
	for _, p := range parts[1:] {
		require.NoError(t, reduce.Into(d, o, alignedCopy(acc), alignedCopy(p)))
		tmp := alignedCopy(acc)
		require.NoError(t, reduce.Into(d, o, tmp, alignedCopy(p)))
		acc = tmp
	}
	return acc
}

func alignedCopy(b []byte) []byte {
	w := make([]uint64, (len(b)+7)/8)
	out := make([]byte, 0)
	if len(w) > 0 {
		out = unsafeBytes(w)[:len(b)]
	}
	copy(out, b)
	return out
}

// expected computes every rank's dst directly from the inputs, following
// the buffer conventions of sched.Verify.
func expected(t *testing.T, plan *sched.Plan, d coll.Dtype, o coll.Op, in [][]byte) [][]byte {
	n, B := plan.NRanks, plan.Bytes
	out := make([][]byte, n)
	switch plan.Collective {
	case coll.Allgather:
		cat := bytes.Join(in, nil)
		for r := range out {
			out[r] = cat
		}
	case coll.Allreduce:
		all := reduceAll(t, d, o, in)
		for r := range out {
			out[r] = all
		}
	case coll.ReduceScatter:
		for r := range out {
			parts := make([][]byte, n)
			for i := range parts {
				parts[i] = in[i][int64(r)*B : int64(r+1)*B]
			}
			out[r] = reduceAll(t, d, o, parts)
		}
	case coll.Bcast:
		for r := range out {
			out[r] = in[plan.Root]
		}
	case coll.Alltoallv:
		for r := range out {
			out[r] = []byte{}
			for i := 0; i < n; i++ {
				var off int64
				for k := 0; k < r; k++ {
					off += plan.Counts[i][k]
				}
				out[r] = append(out[r], in[i][off:off+plan.Counts[i][r]]...)
			}
		}
	default:
		t.Fatalf("no reference for %s", plan.Collective)
	}
	return out
}

func randomCounts(rng *rand.Rand, n int, max int64) [][]int64 {
	c := make([][]int64, n)
	for i := range c {
		c[i] = make([]int64, n)
		for j := range c[i] {
			if rng.IntN(4) != 0 { // a quarter are zeros
				c[i][j] = rng.Int64N(max + 1)
			}
		}
	}
	return c
}

// TestEveryAlgorithmMovesRealData runs every registered algorithm of every
// collective (sched.Algorithms, so new ones are covered as they land) on
// the in-memory transport at 2 to 64 ranks, with odd sizes, every dtype
// and op for reductions, eager and rendezvous sends, random delays and
// reordering, and compares every rank's dst with a reference computed
// directly from the inputs.
func TestEveryAlgorithmMovesRealData(t *testing.T) {
	shapes := fullShapes
	if testing.Short() {
		shapes = shortShapes
	}
	rng := rand.New(rand.NewPCG(42, 0))
	redCases := reductionCases()
	modes := transportModes
	caseNo, ran, skipped, devRuns := 0, 0, 0, 0
	badPlans := map[string]bool{}
	perAlg := map[string]int{}
	start := time.Now()
	for _, c := range []coll.Collective{coll.Allgather, coll.Allreduce, coll.ReduceScatter, coll.Alltoallv, coll.Bcast} {
		for _, alg := range sched.Algorithms(c) {
			intras := []string{""}
			if alg.Name == "parallel_rings" && c == coll.Allgather {
				intras = append(intras, sched.IntraAlgorithms()...)
			}
			for si, sh := range shapes {
				n := sh.nodes * sh.gpus
				tp := topo.SweepShape(sh.nodes, sh.gpus)
				for _, elems := range []int64{1, 7, 1003} {
					if n >= 32 && elems == 1003 && testing.Short() {
						continue
					}
					// Every dtype/op on the first shapes; a rotating pair elsewhere.
					var pairs [][2]int
					if c.Reduces() && si < 2 && elems == 7 {
						pairs = redCases
					} else if c.Reduces() {
						pairs = [][2]int{redCases[caseNo%len(redCases)], redCases[(caseNo*7+3)%len(redCases)]}
					} else {
						pairs = [][2]int{{int(coll.Uint8), int(coll.Sum)}}
					}
					for _, intra := range intras {
						if intra != "" && (elems != 7 || si%3 != 0) {
							continue
						}
						for _, pr := range pairs {
							d, o := coll.Dtype(pr[0]), coll.Op(pr[1])
							caseNo++
							spec := sched.Spec{Collective: c, Algorithm: alg.Name, Intra: intra, Topo: tp,
								Bytes: elems * int64(d.Size()), DtypeBytes: d.Size(), Root: caseNo % n}
							if caseNo%4 == 0 {
								spec.Chunks = 3
							}
							if c == coll.Alltoallv {
								spec.Counts = randomCounts(rng, n, elems)
							}
							name := fmt.Sprintf("case %d: %s/%s intra=%q %dx%d bytes=%d chunks=%d %v/%v", caseNo, c, alg.Name, intra, sh.nodes, sh.gpus, spec.Bytes, spec.Chunks, d, o)
							plan, err := sched.Generate(spec)
							if sched.IsUnsupported(err) {
								skipped++
								continue
							}
							require.NoError(t, err, name)
							if _, verr := sched.Verify(plan); verr != nil {
								// A generator bug, not an executor one: report it
								// once per algorithm and keep testing the rest.
								key := string(c) + "/" + alg.Name
								if !badPlans[key] {
									badPlans[key] = true
									t.Errorf("%s: sched.Verify rejects the plan (generator bug): %v", name, verr)
								}
								continue
							}
							in := make([][]byte, n)
							for r := range in {
								in[r] = make([]byte, plan.Ranks[r].Sizes.Src)
								fillInput(rng, d, o, r, n, in[r])
							}
							want := expected(t, plan, d, o, in)
							mode := modes[caseNo%len(modes)]
							mode.Seed = uint64(caseNo)
							got, err := memtransport.RunPlanWith(plan, d, o, in, memtransport.RunOptions{Options: mode, Timeout: 20 * time.Second})
							require.NoError(t, err, name)
							for r := range got {
								if at := firstDiff(want[r], got[r]); at >= 0 {
									t.Fatalf("%s: rank %d dst differs from the reference at byte %d of %d (want % x, got % x; mode %+v)",
										name, r, at, len(want[r]), clip(want[r], at), clip(got[r], at), mode)
								}
							}
							if caseNo%3 == 0 {
								// The same case in fake device memory (1 to 3
								// devices): every copy and reduction through an
								// asynchronous executor that completes in an
								// order of its own, transfers through the
								// device's copy, results read back.
								dev := memtransport.RunOptions{Options: mode, Timeout: 20 * time.Second, Device: fakedev.New(uint64(caseNo)), Devices: 1 + caseNo%3}
								got, err := memtransport.RunPlanWith(plan, d, o, in, dev)
								require.NoError(t, err, name+" (fake device)")
								for r := range got {
									if at := firstDiff(want[r], got[r]); at >= 0 {
										t.Fatalf("%s (fake device): rank %d dst differs from the reference at byte %d of %d (want % x, got % x)",
											name, r, at, len(want[r]), clip(want[r], at), clip(got[r], at))
									}
								}
								devRuns++
							}
							ran++
							perAlg[string(c)+"/"+alg.Name]++
						}
					}
				}
			}
		}
	}
	for _, c := range []coll.Collective{coll.Allgather, coll.Allreduce, coll.ReduceScatter, coll.Alltoallv, coll.Bcast} {
		for _, alg := range sched.Algorithms(c) {
			key := string(c) + "/" + alg.Name
			t.Logf("%-28s %4d runs", key, perAlg[key])
			if perAlg[key] == 0 && !badPlans[key] {
				t.Errorf("%s: no spec of the grid ran", key)
			}
		}
	}
	t.Logf("%d runs compared (%d of them again in fake device memory), %d specs unsupported by their algorithm, %v", ran, devRuns, skipped, time.Since(start).Round(time.Millisecond))
	require.Positive(t, ran)
	require.Positive(t, devRuns)
}

// firstDiff is the first byte where a and b differ (or where one ends), -1
// when they are equal.
func firstDiff(a, b []byte) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func clip(b []byte, at int) []byte { return b[min(at, len(b)):min(at+8, len(b))] }
