package sched

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/nimble"
	"github.com/goring-hpc/goring/topo"
)

// Uniform counts over the grid (NIMBLE: no gain, and no split, for
// uniform traffic): every block moves once, as pairwise moves it.
func TestAlltoallvNimbleVerifies(t *testing.T) {
	verifyGrid(t, coll.Alltoallv, "nimble", nil,
		func(t *testing.T, g gridCase, plan *Plan, rep *Report) {
			p := g.nodes * g.gpus
			assert.Equal(t, int64(p-1)*int64(p)*g.bytes, rep.BytesMoved)
			assert.Zero(t, rep.MaxScratchBytes, "uniform traffic relays nothing")
		})
}

// nimbleCounts draws a random count matrix of n ranks in elements of elem
// bytes, zeros and odd element counts included, with hot pairs of at least
// the split threshold so that some demands are split and relayed.
func nimbleCounts(rng *rand.Rand, n, elem, hot int) [][]int64 {
	e := int64(elem)
	m := make([][]int64, n)
	for i := range m {
		m[i] = make([]int64, n)
		for j := range m[i] {
			if rng.IntN(3) > 0 {
				m[i][j] = e * int64(2*rng.IntN(500)+1)
			}
		}
	}
	for h := range hot {
		s, d := rng.IntN(n), (h*7)%n
		if s == d {
			s = (d + 1) % n
		}
		m[s][d] = e * (int64(nimble.DefaultSplitThresholdBytes)/e + int64(2*rng.IntN(1<<20)+1))
	}
	return m
}

// Random counts with zeros, odd sizes and hot pairs, 2..64 ranks, every
// dtype, with and without chunking: Verify checks matching, deadlock,
// races and the final contents of every dst byte.
func TestAlltoallvNimbleRandomCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	shapes := [][2]int{{1, 2}, {1, 3}, {1, 4}, {2, 1}, {2, 2}, {2, 4}, {3, 3}, {4, 4}, {1, 8}, {8, 8}}
	dtypes := []int{1, 2, 4, 8}
	relayedCases := 0
	for i, sh := range shapes {
		n := sh[0] * sh[1]
		d := dtypes[i%len(dtypes)]
		counts := nimbleCounts(rng, n, d, min(n, 6))
		for _, chunks := range []int{0, 3} {
			t.Run(fmt.Sprintf("case%d_%dx%d_d%d_k%d", i, sh[0], sh[1], d, chunks), func(t *testing.T) {
				spec := Spec{Collective: coll.Alltoallv, Algorithm: "nimble", Topo: topo.SweepShape(sh[0], sh[1]), DtypeBytes: d, Counts: counts, Chunks: chunks}
				plan, rep := mustVerify(t, spec)
				var offDiag int64
				for a := range counts {
					for b := range counts[a] {
						if a != b {
							offDiag += counts[a][b]
						}
					}
					sd, rd := AlltoallvDispls(counts, a)
					assert.Equal(t, sd[n], plan.Ranks[a].Sizes.Src)
					assert.Equal(t, rd[n], plan.Ranks[a].Sizes.Dst)
					assert.LessOrEqual(t, plan.Ranks[a].Sizes.Scratch, int64(NimbleScratchBoundBytes))
				}
				assert.GreaterOrEqual(t, rep.BytesMoved, offDiag)
				if rep.BytesMoved > offDiag {
					relayedCases++
					assert.Positive(t, rep.MaxScratchBytes)
				}
				assert.Contains(t, plan.Note, "nimble: ")
			})
		}
	}
	assert.Greater(t, relayedCases, len(shapes), "most multi-GPU cases relay something")
}

// Tags are unique per (sender, receiver) pair, and hints say where each
// hop goes: relayed hops carry gpu:N (the relay) or rail:R (the rail the
// planner chose), and the planner's link loads drop.
func TestAlltoallvNimbleTagsAndHints(t *testing.T) {
	n := 8
	counts := make([][]int64, n)
	for i := range counts {
		counts[i] = make([]int64, n)
		for j := range counts[i] {
			counts[i][j] = 4 << 20
		}
		counts[i][0] = 64 << 20 // hot destination 0
	}
	spec := Spec{Collective: coll.Alltoallv, Topo: topo.SweepShape(2, 4), DtypeBytes: 4, Counts: counts}
	plan, mp, err := GenerateNimble(spec, nimble.MWUOptions{})
	require.NoError(t, err)
	_, err = Verify(plan)
	require.NoError(t, err)
	assert.Less(t, mp.MaxAfterUS, mp.MaxBeforeUS)
	hints := map[PathKind]int{}
	for _, prog := range plan.Ranks {
		seen := map[[2]int]bool{}
		for _, s := range prog.Steps {
			if s.Op != OpSend && s.Op != OpRecv {
				continue
			}
			k := [2]int{int(s.Peer), int(s.Tag)}
			if s.Op == OpRecv {
				k[0] = -1 - k[0]
			}
			require.False(t, seen[k], "rank %d: tag %d used twice with peer %d", prog.Rank, s.Tag, s.Peer)
			seen[k] = true
			if s.Op != OpSend {
				continue
			}
			hints[s.Path.Kind]++
			peerNode := plan.Ranks[s.Peer].Node
			switch s.Path.Kind {
			case PathRail:
				assert.NotEqual(t, prog.Node, peerNode)
			case PathGPU:
				assert.Equal(t, prog.Node, peerNode)
				assert.True(t, int(s.Path.Index) == prog.Local || int(s.Path.Index) == plan.Ranks[s.Peer].Local, "gpu hint names an end of the hop")
			case PathDirect:
				assert.Equal(t, prog.Node, peerNode)
			default:
				t.Fatalf("rank %d: send without hint", prog.Rank)
			}
		}
	}
	assert.Positive(t, hints[PathGPU])
	assert.Positive(t, hints[PathRail])
	assert.Positive(t, hints[PathDirect])
}

// A real rank builds only its own program (GenerateRank): it must equal
// that rank's program in the whole plan, and every rank must agree on the
// tags they use with each other.
func TestAlltoallvNimblePerRankMatchesWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	counts := nimbleCounts(rng, 8, 4, 5)
	spec := Spec{Collective: coll.Alltoallv, Algorithm: "nimble", Topo: topo.SweepShape(2, 4), DtypeBytes: 4, Counts: counts}
	whole, err := Generate(spec)
	require.NoError(t, err)
	for r := range whole.Ranks {
		one, err := GenerateRank(spec, r)
		require.NoError(t, err)
		assert.Equal(t, whole.Ranks[r].Sizes, one.Ranks[r].Sizes, "rank %d", r)
		require.Equal(t, len(whole.Ranks[r].Steps), len(one.Ranks[r].Steps), "rank %d", r)
		for i := range whole.Ranks[r].Steps {
			assert.Equal(t, whole.Ranks[r].Steps[i], one.Ranks[r].Steps[i], "rank %d step %d", r, i)
			assert.Equal(t, whole.Ranks[r].Deps(i), one.Ranks[r].Deps(i), "rank %d step %d deps", r, i)
		}
	}
}

// Long relayed pieces go in chunks of at most nimbleSlotBytes through at
// most nimbleRelaySlots slots per pool: a 64 MiB split of one pair on a
// 4-GPU node needs only 4 slots of 4 MiB at each relay.
func TestAlltoallvNimbleScratchBounded(t *testing.T) {
	counts := make([][]int64, 4)
	for i := range counts {
		counts[i] = make([]int64, 4)
	}
	counts[1][0] = 192 << 20
	spec := Spec{Collective: coll.Alltoallv, Algorithm: "nimble", Topo: topo.SweepShape(1, 4), DtypeBytes: 4, Counts: counts}
	plan, rep := mustVerify(t, spec)
	for _, r := range []int{2, 3} {
		// A third of 192 MiB in 16 chunks of a little under 4 MiB.
		assert.LessOrEqual(t, plan.Ranks[r].Sizes.Scratch, int64(nimbleRelaySlots*nimbleSlotBytes), "relay %d", r)
		assert.Greater(t, plan.Ranks[r].Sizes.Scratch, int64(nimbleRelaySlots*nimbleSlotBytes)*9/10, "relay %d", r)
	}
	assert.Zero(t, plan.Ranks[0].Sizes.Scratch)
	assert.Zero(t, plan.Ranks[1].Sizes.Scratch)
	// About a third of 192 MiB on each path; relayed thirds move twice.
	assert.InDelta(t, float64(192<<20)*5/3, float64(rep.BytesMoved), float64(192<<20)*0.05)
	for _, s := range plan.Ranks[2].Steps {
		assert.LessOrEqual(t, s.Len, int64(nimbleSlotBytes))
	}
}

// Below the 1 MiB threshold nothing is split, skew or not (NIMBLE
// section V-B), and a topology whose nodes cannot talk is refused with an
// UnsupportedError.
func TestAlltoallvNimbleThresholdAndUnsupported(t *testing.T) {
	counts := make([][]int64, 4)
	for i := range counts {
		counts[i] = make([]int64, 4)
		counts[i][0] = 1<<20 - 4
	}
	plan, rep := mustVerify(t, Spec{Collective: coll.Alltoallv, Algorithm: "nimble", Topo: topo.SweepShape(1, 4), DtypeBytes: 4, Counts: counts})
	assert.Equal(t, int64(3*(1<<20-4)), rep.BytesMoved)
	assert.Contains(t, plan.Note, "0 of 3 demands split")

	tp := topo.SweepShape(2, 2)
	tp.Rails = nil
	_, err := Generate(Spec{Collective: coll.Alltoallv, Algorithm: "nimble", Topo: tp, DtypeBytes: 4, Bytes: 4})
	require.Error(t, err)
	assert.True(t, IsUnsupported(err), "%v", err)
	assert.Contains(t, err.Error(), "no rails")
}

// Golden transcript of a tiny split: rank 1 sends rank 0 3 MiB + 4 bytes
// on a 3-GPU node, so that demand goes half direct, half through GPU 2.
// Regenerate with go test ./sched -run Golden -rewrite.
func TestAlltoallvNimbleGolden(t *testing.T) {
	const hot = 3<<20 + 4
	spec := Spec{Collective: coll.Alltoallv, Algorithm: "nimble", Topo: topo.SweepShape(1, 3), DtypeBytes: 4,
		Counts: [][]int64{{4, 8, 0}, {hot, 4, 12}, {16, 0, 4}}}
	plan, rep := mustVerify(t, spec)
	var got bytes.Buffer
	require.NoError(t, WriteProgram(&got, plan))
	got.WriteString("--- verification\n")
	got.WriteString(rep.String())
	path := filepath.Join("testdata", "alltoallv_nimble_1x3.golden")
	if *rewrite {
		require.NoError(t, os.WriteFile(path, got.Bytes(), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./sched -run Golden -rewrite")
	require.Equal(t, string(want), got.String(), "%s differs from its golden transcript; if intended, rerun with -rewrite and review the diff", path)
}
