package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// scratchBound is the documented bound on Sizes.Scratch of one algorithm
// (doc.go, "Scratch memory") for a spec on N nodes of G GPUs.
type scratchBound func(s *Spec, N, G int) int64

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

var scratchBounds = map[string]scratchBound{
	"allgather/ring":               nil,
	"allgather/neighbor":           nil,
	"allgather/recursive_doubling": nil,
	"allgather/bruck":              nil,
	"allgather/parallel_rings":     nil,
	"alltoallv/pairwise":           nil,
	"alltoallv/nimble":             func(s *Spec, N, G int) int64 { return NimbleScratchBoundBytes },
	"bcast/knomial":                nil,
	"allgather/multiwrite":         nil,
	"allgather/leader":             nil,
	"bcast/leader":                 nil,
	"reduce_scatter/leader": func(s *Spec, N, G int) int64 {
		if N*G == 1 {
			return 0
		}
		return int64(1+min(N*G-1, 2)) * int64(N*G) * s.Bytes
	},
	"allreduce/leader":             func(s *Spec, N, G int) int64 { return int64(min(N*G-1, 2)) * s.Bytes },
	"bcast/multiwrite":             nil,
	"allreduce/ring":               nil,
	"allreduce/rabenseifner":       func(s *Spec, N, G int) int64 { return s.Bytes },
	"allreduce/recursive_doubling": func(s *Spec, N, G int) int64 { return s.Bytes },
	"allreduce/lane": func(s *Spec, N, G int) int64 {
		return int64(G-1+b2i(N > 1)) * MaxBlockLen(s.Bytes, G, s.DtypeBytes)
	},
	"allreduce/parallel_rings": func(s *Spec, N, G int) int64 {
		slot := MaxBlockLen(s.Bytes, N*G, s.DtypeBytes) + int64(max(s.Chunks, 1)*s.DtypeBytes)
		return int64(min(2, N)*(G-1+2*b2i(N > 1))) * slot
	},
	"reduce_scatter/ring": func(s *Spec, N, G int) int64 { return 2 * s.Bytes },
	"reduce_scatter/parallel_rings": func(s *Spec, N, G int) int64 {
		return int64(min(2, N)*(G-1+2*b2i(N > 1))) * s.Bytes
	},
}

// Every registered algorithm has a documented scratch bound, and every plan
// over a grid of shapes, sizes (down to one element, where element rounding
// dominates) and chunk counts stays within it.
func TestScratchWithinDocumentedBound(t *testing.T) {
	shapes := [][2]int{{1, 1}, {1, 2}, {1, 3}, {1, 4}, {2, 2}, {2, 4}, {3, 2}, {4, 4}, {1, 8}, {2, 8}, {5, 3}}
	checked := 0
	for _, c := range []coll.Collective{coll.Allgather, coll.Allreduce, coll.ReduceScatter, coll.Alltoallv, coll.Bcast} {
		for _, a := range Algorithms(c) {
			key := string(c) + "/" + a.Name
			bound, ok := scratchBounds[key]
			require.True(t, ok, "%s has no documented scratch bound: add it to doc.go and scratchBounds", key)
			for i, sh := range shapes {
				tp := topo.SweepShape(sh[0], sh[1])
				for _, elems := range []int64{1, 3, 1000, 262147} {
					for _, chunks := range []int{1, 4} {
						spec := Spec{Collective: c, Algorithm: a.Name, Topo: tp, Bytes: 4 * elems, DtypeBytes: 4, Chunks: chunks}
						if c == coll.Alltoallv {
							spec.Counts, spec.Bytes = UniformCounts(tp.NumGPUs(), 4*elems), 0
						}
						plan, err := Generate(spec)
						if IsUnsupported(err) {
							continue
						}
						require.NoError(t, err, "case %d: %s %dx%d %d elements", i, key, sh[0], sh[1], elems)
						want := int64(0)
						if bound != nil {
							want = bound(&spec, sh[0], sh[1])
						}
						for _, r := range plan.Ranks {
							assert.LessOrEqual(t, r.Sizes.Scratch, want, "case %d: %s %dx%d, %d elements, %d chunks, rank %d", i, key, sh[0], sh[1], elems, chunks, r.Rank)
						}
						checked++
					}
				}
			}
		}
	}
	t.Logf("%d plans checked", checked)
	assert.Greater(t, checked, 500)
}
