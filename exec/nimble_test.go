package exec_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/memtransport"
	"github.com/goring-hpc/goring/nimble"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// The grid of TestEveryAlgorithmMovesRealData keeps alltoallv counts small,
// under nimble's 1 MiB split threshold, so nimble never relays there. Here
// hot pairs of 1-3 MiB make it split and relay (2-hop through intra-node
// GPUs, rail-matched through both nodes' GPUs of a rail, through scratch
// slots that are reused), and every rank's dst is compared byte for byte
// with the reference, over rendezvous and eager sends with delays and
// reordering.
func TestNimbleRelaysMoveRealData(t *testing.T) {
	rng := rand.New(rand.NewPCG(0x2002, 1))
	modes := []memtransport.Options{{}, {Eager: true}, {MaxDelay: 200 * time.Microsecond, Reorder: true}}
	for i, sh := range [][2]int{{1, 4}, {2, 2}, {2, 4}} {
		n := sh[0] * sh[1]
		counts := randomCounts(rng, n, 1000)
		for j := range n {
			counts[j][0] = 1<<20 + int64(rng.IntN(2<<20)) // hot destination 0
		}
		counts[n-1][1] = 3<<20 + 1 // an odd hot pair
		for k, mode := range modes {
			name := fmt.Sprintf("case %d.%d: %dx%d mode %+v", i, k, sh[0], sh[1], mode)
			spec := sched.Spec{Collective: coll.Alltoallv, Algorithm: "nimble", Topo: topo.SweepShape(sh[0], sh[1]), DtypeBytes: 1, Counts: counts, Chunks: k}
			plan, mp, err := sched.GenerateNimble(spec, nimble.MWUOptions{})
			require.NoError(t, err, name)
			relayed := false
			for _, d := range mp.Demands {
				for p, b := range d.SplitBytes {
					relayed = relayed || (b > 0 && d.Paths[p].Hops() > 1)
				}
			}
			require.True(t, relayed, "%s: the matrix must make nimble relay", name)
			in := make([][]byte, n)
			for r := range in {
				in[r] = make([]byte, plan.Ranks[r].Sizes.Src)
				fillInput(rng, coll.Uint8, coll.Sum, r, n, in[r])
			}
			want := expected(t, plan, coll.Uint8, coll.Sum, in)
			mode.Seed = uint64(i*10 + k)
			got, err := memtransport.RunPlanWith(plan, coll.Uint8, coll.Sum, in, memtransport.RunOptions{Options: mode, Timeout: 20 * time.Second})
			require.NoError(t, err, name)
			for r := range got {
				assert.Equal(t, -1, firstDiff(want[r], got[r]), "%s: rank %d dst differs", name, r)
			}
		}
	}
}
