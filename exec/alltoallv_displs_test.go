package exec_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/memtransport"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// Every alltoallv algorithm over caller displacements (sched.AlltoallvAt):
// blocks in reverse order with gaps between them, random counts with
// zeros, and a NIMBLE split big enough to relay. The gaps of dst must keep
// the harness's fill (0xA5) and every block must hold what its source sent
// from its own displacement.
func TestAlltoallvAtDisplacements(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 0))
	for _, alg := range sched.Algorithms(coll.Alltoallv) {
		relayed := false // some plan used relay scratch (nimble)
		for _, sh := range []shape{{1, 2}, {1, 3}, {2, 2}, {1, 4}} {
			n := sh.nodes * sh.gpus
			tp := topo.SweepShape(sh.nodes, sh.gpus)
			for _, maxBytes := range []int64{13, 3 << 20} {
				counts := randomCounts(rng, n, maxBytes)
				for i := range counts {
					for j := range counts[i] {
						counts[i][j] &^= 1 // whole 2-byte elements
					}
				}
				plan, err := sched.Generate(sched.Spec{Collective: coll.Alltoallv, Algorithm: alg.Name, Topo: tp,
					DtypeBytes: 2, Counts: counts, Chunks: 2})
				if sched.IsUnsupported(err) {
					continue
				}
				require.NoError(t, err, "%s %v", alg.Name, sh)
				// Rank r's block for j at a reversed, gapped offset; the
				// same rule for the blocks it receives.
				layout := func(len func(j int) int64) []int64 {
					at := make([]int64, n)
					off := int64(5)
					for j := n - 1; j >= 0; j-- {
						at[j] = off
						off += len(j) + 3
					}
					return at
				}
				remapped := *plan
				remapped.Ranks = make([]sched.RankProgram, n)
				sendAt, recvAt := make([][]int64, n), make([][]int64, n)
				inputs := make([][]byte, n)
				for r := range n {
					sendAt[r] = layout(func(j int) int64 { return counts[r][j] })
					recvAt[r] = layout(func(i int) int64 { return counts[i][r] })
					p, err := sched.AlltoallvAt(&plan.Ranks[r], counts, r, sendAt[r], recvAt[r])
					require.NoError(t, err)
					remapped.Ranks[r] = *p
					relayed = relayed || p.Sizes.Scratch > 0
					inputs[r] = make([]byte, p.Sizes.Src)
					for k := range inputs[r] {
						inputs[r][k] = byte(rng.Uint32())
					}
				}
				outs, err := memtransport.RunPlan(&remapped, coll.Uint16, coll.Sum, inputs)
				require.NoError(t, err, "%s %v", alg.Name, sh)
				for r := range n {
					want := make([]byte, remapped.Ranks[r].Sizes.Dst)
					for k := range want {
						want[k] = 0xA5
					}
					for i := range n {
						c := counts[i][r]
						if c == 0 {
							continue
						}
						copy(want[recvAt[r][i]:recvAt[r][i]+c], inputs[i][sendAt[i][r]:sendAt[i][r]+c])
					}
					require.Equal(t, want, outs[r], "%s %v max %d rank %d", alg.Name, sh, maxBytes, r)
				}
			}
		}
		if alg.Name == "nimble" {
			require.True(t, relayed, "no nimble plan relayed: the test misses relayed pieces")
		}
	}
}

// Overlapping receive blocks and displacement arrays of the wrong length
// are refused; the packed layout needs no mapping.
func TestAlltoallvAtRefuses(t *testing.T) {
	counts := [][]int64{{4, 4}, {4, 4}}
	plan, err := sched.Generate(sched.Spec{Collective: coll.Alltoallv, Algorithm: "pairwise", Topo: topo.SweepShape(1, 2), DtypeBytes: 4, Counts: counts})
	require.NoError(t, err)
	_, err = sched.AlltoallvAt(&plan.Ranks[0], counts, 0, []int64{0, 4}, []int64{0, 2})
	require.ErrorContains(t, err, "overlaps")
	_, err = sched.AlltoallvAt(&plan.Ranks[0], counts, 0, []int64{0}, []int64{0, 4})
	require.Error(t, err)
	_, err = sched.AlltoallvAt(&plan.Ranks[0], counts, 0, []int64{0, -4}, []int64{0, 4})
	require.Error(t, err)
	sd, _ := sched.AlltoallvDispls(counts, 0)
	require.True(t, sched.AlltoallvPacked(sd, []int64{0, 4}))
	require.False(t, sched.AlltoallvPacked(sd, []int64{4, 0}))
	// An empty block may sit anywhere.
	sd, _ = sched.AlltoallvDispls([][]int64{{0, 4}, {4, 4}}, 0)
	require.True(t, sched.AlltoallvPacked(sd, []int64{99, 0}))
}
