package exec_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
	"github.com/stretchr/testify/require"
)

// scratchBound is a coarse ceiling on the scratch (bytes per rank) an
// algorithm may ask the executor for: n ranks, B = Plan.Bytes, e = element
// size, io = the rank's src+dst bytes. The exact bounds are package sched's
// (its package comment, "Scratch memory", checked by sched's
// TestScratchWithinDocumentedBound); these catch a generator that starts
// asking for far more than any algorithm of its kind.
func scratchBound(c coll.Collective, alg string, n int, B, e, io int64) int64 {
	blk := (B/int64(n) + e) // one ring block, rounded up to a whole element
	switch c + "/" + coll.Collective(alg) {
	case "allreduce/ring":
		return 2 * blk // double-buffered receive block
	case "allreduce/rabenseifner", "allreduce/lane":
		return B + int64(n)*e // half-vector exchanges summed, or one lane's share per round
	case "allreduce/parallel_rings":
		return 2*B + 2*int64(n)*e // per-block element rounding dominates tiny vectors
	case "reduce_scatter/ring":
		return 2 * B // double-buffered output-sized block
	case "reduce_scatter/parallel_rings":
		return 2*int64(n)*B + 2*int64(n)*e // twice the input
	case "reduce_scatter/leader":
		return 3 * int64(n) * B // rank 0: an accumulator and two input slots
	}
	if c == coll.Allgather || c == coll.Alltoallv || c == coll.Bcast {
		return 0
	}
	return 2 * io // catch-all for an algorithm not yet listed
}

func TestScratchBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	caseNo := 0
	for _, c := range []coll.Collective{coll.Allgather, coll.Allreduce, coll.ReduceScatter, coll.Alltoallv, coll.Bcast} {
		for _, alg := range sched.Algorithms(c) {
			for _, sh := range []shape{{1, 2}, {1, 4}, {2, 4}, {3, 3}, {4, 4}, {8, 8}} {
				for _, B := range []int64{4, 4 * 1001, 1 << 20} {
					for _, chunks := range []int{0, 4} {
						caseNo++
						n := sh.nodes * sh.gpus
						spec := sched.Spec{Collective: c, Algorithm: alg.Name, Topo: topo.SweepShape(sh.nodes, sh.gpus), Bytes: B, DtypeBytes: 4, Chunks: chunks}
						if c == coll.Alltoallv {
							spec.Counts = randomCounts(rng, n, B/4)
							for _, row := range spec.Counts {
								for j := range row {
									row[j] *= 4
								}
							}
						}
						plan, err := sched.Generate(spec)
						if sched.IsUnsupported(err) {
							continue
						}
						name := fmt.Sprintf("case %d: %s/%s %dx%d bytes=%d chunks=%d", caseNo, c, alg.Name, sh.nodes, sh.gpus, B, chunks)
						require.NoError(t, err, name)
						for _, p := range plan.Ranks {
							bound := scratchBound(c, alg.Name, n, B, 4, p.Sizes.Src+p.Sizes.Dst)
							require.LessOrEqual(t, p.Sizes.Scratch, bound, "%s rank %d", name, p.Rank)
						}
					}
				}
			}
		}
	}
}
