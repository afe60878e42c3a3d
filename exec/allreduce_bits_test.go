package exec_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/memtransport"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// TestAllreduceRanksAgreeBitwise runs every allreduce algorithm on floats
// of random magnitudes, where the order of the additions changes the
// result's low bits (the algorithms' results differ from one another
// here), at one rank, odd and non-power-of-two counts and fewer elements
// than ranks: every rank must still end with the same bits, as the
// replicas of data-parallel training need. TestEveryAlgorithmMovesRealData
// cannot see this: its float inputs sum exactly in any order.
func TestAllreduceRanksAgreeBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	shapes := []shape{{1, 1}, {1, 2}, {2, 1}, {1, 3}, {3, 1}, {1, 5}, {1, 6}, {1, 7}, {2, 3}, {3, 3}, {2, 5}, {4, 2}}
	ran := 0
	for _, alg := range sched.Algorithms(coll.Allreduce) {
		for i, sh := range shapes {
			n := sh.nodes * sh.gpus
			tp := topo.SweepShape(sh.nodes, sh.gpus)
			for _, d := range []coll.Dtype{coll.Float32, coll.Float64, coll.Float16, coll.Bfloat16} {
				for _, elems := range []int64{1, int64(n + 1), 257} {
					spec := sched.Spec{Collective: coll.Allreduce, Algorithm: alg.Name, Topo: tp,
						Bytes: elems * int64(d.Size()), DtypeBytes: d.Size(), Chunks: i % 3}
					name := fmt.Sprintf("allreduce/%s %dx%d %v elems=%d chunks=%d", alg.Name, sh.nodes, sh.gpus, d, elems, spec.Chunks)
					plan, err := sched.Generate(spec)
					if sched.IsUnsupported(err) {
						continue
					}
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					in := make([][]byte, n)
					for r := range in {
						in[r] = make([]byte, spec.Bytes)
						for k := 0; k < int(elems); k++ {
							v := (rng.Float64() - 0.5) * math.Pow(2, float64(rng.IntN(20)-10))
							putFloat(d, in[r][k*d.Size():(k+1)*d.Size()], v)
						}
					}
					got, err := memtransport.RunPlan(plan, d, coll.Sum, in)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					for r := 1; r < n; r++ {
						if at := firstDiff(got[0], got[r]); at >= 0 {
							t.Errorf("%s: rank %d's result differs from rank 0's at byte %d (% x, rank 0 % x)", name, r, at, clip(got[r], at), clip(got[0], at))
							break
						}
					}
					ran++
				}
			}
		}
	}
	if ran == 0 {
		t.Fatal("no allreduce ran")
	}
}
