package sched

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// Pairwise alltoallv (NIMBLE baseline): uniform counts over the grid.
func TestAlltoallvPairwiseVerifies(t *testing.T) {
	verifyGrid(t, coll.Alltoallv, "pairwise", nil,
		func(t *testing.T, g gridCase, plan *Plan, rep *Report) {
			p := g.nodes * g.gpus
			assert.Equal(t, int64(p-1)*int64(p)*g.bytes, rep.BytesMoved)
		})
}

// Skewed and random counts, zeros included: every block lands at the
// prefix-sum displacement.
func TestAlltoallvPairwiseRandomCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for i, shape := range [][2]int{{1, 3}, {2, 2}, {3, 4}, {8, 4}} {
		n := shape[0] * shape[1]
		counts := make([][]int64, n)
		for a := range counts {
			counts[a] = make([]int64, n)
			for b := range counts[a] {
				if rng.IntN(4) > 0 {
					counts[a][b] = 4 * int64(rng.IntN(1000))
				}
			}
		}
		counts[0][n-1] = 4 << 20 // one hot pair
		for _, chunks := range []int{0, 3} {
			t.Run(fmt.Sprintf("case%d_k%d", i, chunks), func(t *testing.T) {
				spec := Spec{Collective: coll.Alltoallv, Algorithm: "pairwise", Topo: topo.SweepShape(shape[0], shape[1]), DtypeBytes: 4, Counts: counts, Chunks: chunks}
				plan, _ := mustVerify(t, spec)
				sd, rd := AlltoallvDispls(counts, n-1)
				require.Equal(t, sd[n], plan.Ranks[n-1].Sizes.Src)
				require.Equal(t, rd[n], plan.Ranks[n-1].Sizes.Dst)
			})
		}
	}
}
