package sched

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/topo"
)

// mustVerify generates and verifies spec, failing the test with the spec in
// the message.
func mustVerify(t *testing.T, spec Spec) (*Plan, *Report) {
	t.Helper()
	plan, err := Generate(spec)
	require.NoError(t, err, "generate %s/%s nodes=%d bytes=%d", spec.Collective, spec.Algorithm, spec.Topo.NumNodes(), spec.Bytes)
	rep, err := Verify(plan)
	require.NoError(t, err, "verify %s/%s %s bytes=%d dtype=%d chunks=%d", spec.Collective, spec.Algorithm, spec.Topo.Name, spec.Bytes, spec.DtypeBytes, spec.Chunks)
	return plan, rep
}

func TestGenerateRejectsBadSpecs(t *testing.T) {
	tp := topo.SweepShape(2, 2)
	cases := []struct {
		name string
		spec Spec
		want string
	}{
		{"1 nil topology", Spec{Collective: coll.Allgather, Algorithm: "ring", Bytes: 4, DtypeBytes: 4}, "no topology"},
		{"2 unknown collective", Spec{Collective: "gather", Algorithm: "ring", Topo: tp, Bytes: 4, DtypeBytes: 4}, `unknown collective "gather"`},
		{"3 unknown algorithm", Spec{Collective: coll.Allgather, Algorithm: "tree", Topo: tp, Bytes: 4, DtypeBytes: 4}, `unknown allgather algorithm "tree" (known: `},
		{"4 bytes not whole elements", Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: tp, Bytes: 6, DtypeBytes: 4}, "6 bytes is not a whole number of 4-byte elements"},
		{"5 dtype size", Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: tp, Bytes: 6, DtypeBytes: 3}, "dtype size 3 bytes"},
		{"6 negative bytes", Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: tp, Bytes: -4, DtypeBytes: 4}, "negative size"},
		{"7 counts rows", Spec{Collective: coll.Alltoallv, Algorithm: "pairwise", Topo: tp, DtypeBytes: 4, Counts: [][]int64{{4}}}, "counts: 1 rows, want 4"},
		{"8 counts columns", Spec{Collective: coll.Alltoallv, Algorithm: "pairwise", Topo: tp, DtypeBytes: 4, Counts: [][]int64{{4, 4, 4, 4}, {4}, {4, 4, 4, 4}, {4, 4, 4, 4}}}, "row 1 has 1 entries, want 4"},
		{"9 negative count", Spec{Collective: coll.Alltoallv, Algorithm: "pairwise", Topo: tp, DtypeBytes: 4, Counts: [][]int64{{4, 4, 4, -4}, {4, 4, 4, 4}, {4, 4, 4, 4}, {4, 4, 4, 4}}}, "counts: [0][3] = -4 bytes is negative"},
		{"10 root out of range", Spec{Collective: coll.Bcast, Algorithm: "knomial", Topo: tp, Bytes: 4, DtypeBytes: 4, Root: 4}, "root 4 out of range 0..3"},
		{"11 negative chunks", Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: tp, Bytes: 4, DtypeBytes: 4, Chunks: -1}, "negative chunk count"},
		{"12 zero bytes", Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: tp, Bytes: 0, DtypeBytes: 4}, "0 bytes"},
		{"13 counts for allgather", Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: tp, Bytes: 4, DtypeBytes: 4, Counts: [][]int64{}}, "counts are only for alltoallv"},
		// Buffers whose sizes wrap an int64: the generators' offsets went
		// negative (a panic in pairwise, a plan with a negative dst).
		{"14 alltoallv row overflows", Spec{Collective: coll.Alltoallv, Algorithm: "pairwise", Topo: tp, DtypeBytes: 1, Bytes: 1 << 61}, "rank 0 sends"},
		{"15 alltoallv column overflows", Spec{Collective: coll.Alltoallv, Algorithm: "pairwise", Topo: tp, DtypeBytes: 1,
			Counts: [][]int64{{1 << 61, 0, 0, 0}, {1 << 61, 0, 0, 0}, {1 << 61, 0, 0, 0}, {0, 0, 0, 0}}}, "rank 0 receives"},
		{"16 allgather dst overflows", Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: tp, Bytes: 1 << 61, DtypeBytes: 4}, "buffers pass"},
		{"17 reduce_scatter src overflows", Spec{Collective: coll.ReduceScatter, Algorithm: "ring", Topo: tp, Bytes: 1 << 61, DtypeBytes: 4}, "buffers pass"},
		{"18 token rows overflow", Spec{Collective: coll.Dispatch, Algorithm: "unicast", Topo: tp, DtypeBytes: 1,
			Routing: &moe.Routing{TokenBytes: 1 << 61, TopK: 1, Tokens: []int{3, 0, 0, 0}, Experts: []int32{0, 0, 0}, Placement: []int{0}}}, "buffers pass"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Generate(c.spec)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestGenerateFillsHeader(t *testing.T) {
	tp := topo.SweepShape(3, 2)
	plan, err := Generate(Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: tp, Bytes: 64, DtypeBytes: 4})
	require.NoError(t, err)
	assert.Equal(t, coll.Allgather, plan.Collective)
	assert.Equal(t, "ring", plan.Algorithm)
	assert.Equal(t, tp.Name, plan.Topology)
	assert.Equal(t, 6, plan.NRanks)
	assert.Equal(t, int64(64), plan.Bytes)
	assert.Equal(t, 4, plan.DtypeBytes)
	for r, rp := range plan.Ranks {
		assert.Equal(t, r, rp.Rank)
		assert.Equal(t, r/2, rp.Node)
		assert.Equal(t, r%2, rp.Local)
	}
}

// GenerateRank must give each rank exactly the program Generate gives it.
func TestGenerateRankMatchesGenerate(t *testing.T) {
	tp := topo.SweepShape(3, 2)
	for _, c := range []struct {
		coll coll.Collective
		alg  string
	}{{coll.Allgather, "ring"}, {coll.Allgather, "parallel_rings"}, {coll.Allgather, "neighbor"}, {coll.Allgather, "bruck"},
		{coll.ReduceScatter, "ring"}, {coll.Allreduce, "ring"}, {coll.Allreduce, "rabenseifner"},
		{coll.Alltoallv, "pairwise"}, {coll.Bcast, "knomial"}} {
		spec := Spec{Collective: c.coll, Algorithm: c.alg, Topo: tp, Bytes: 64, DtypeBytes: 4, Chunks: 2, Root: 1}
		full, err := Generate(spec)
		require.NoError(t, err)
		for r := 0; r < tp.NumGPUs(); r++ {
			one, err := GenerateRank(spec, r)
			require.NoError(t, err)
			assert.Equal(t, full.Algorithm, one.Algorithm)
			assert.Equal(t, full.Ranks[r].Steps, one.Ranks[r].Steps, "rank %d", r)
			assert.Equal(t, full.Ranks[r].Sizes, one.Ranks[r].Sizes)
			for id := range full.Ranks[r].Steps {
				assert.Equal(t, full.Ranks[r].Deps(id), one.Ranks[r].Deps(id))
			}
		}
	}
	_, err := GenerateRank(Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: tp, Bytes: 4, DtypeBytes: 4}, 6)
	assert.ErrorContains(t, err, "rank 6 out of range 0..5")
}

// gridCase is one point of the test grid of nodes x GPUs x sizes.
type gridCase struct {
	nodes, gpus int
	bytes       int64
	dtype       int
	chunks      int
}

// sampleGrid samples nodes 1-16 x GPUs 1-8 x sizes from one element to
// 64 MiB (odd sizes included) x dtypes x chunk counts. Every (nodes, gpus)
// pair of the list appears, sizes and dtypes rotate over it, and the largest
// sizes go with small clusters so the whole grid stays fast.
func sampleGrid() []gridCase {
	shapes := [][2]int{{1, 1}, {1, 2}, {1, 8}, {2, 1}, {2, 4}, {3, 3}, {4, 2}, {5, 8}, {8, 4}, {16, 1}, {16, 8}, {7, 5}, {16, 4}}
	dtypes := []int{1, 2, 4, 8}
	chunks := []int{0, 1, 3, 4}
	var out []gridCase
	i := 0
	for _, sh := range shapes {
		for _, elems := range []int64{1, 3, 1001} {
			d := dtypes[i%len(dtypes)]
			out = append(out, gridCase{sh[0], sh[1], elems * int64(d), d, chunks[i%len(chunks)]})
			i++
		}
	}
	// Large messages: 1 MiB + one element, and 64 MiB, on a few shapes.
	out = append(out,
		gridCase{2, 4, 1<<20 + 4, 4, 4},
		gridCase{4, 4, 64 << 20, 4, 0},
		gridCase{1, 8, 64 << 20, 2, 8},
		gridCase{16, 8, 64 << 20 / 128, 8, 2},
		gridCase{16, 4, 64 << 20, 4, 0}, // 64 ranks x 64 MiB: symbolic contents keep this cheap
	)
	return out
}

// verifyGrid generates and verifies alg over sampleGrid. unsupported says
// for which ranks count the algorithm must refuse with an UnsupportedError
// (nil: never); the check is both ways, so a refusal that is not documented
// fails, and so does a plan where a refusal is documented.
func verifyGrid(t *testing.T, c coll.Collective, alg string, unsupported func(nranks int) bool, check func(t *testing.T, g gridCase, plan *Plan, rep *Report)) {
	t.Helper()
	for i, g := range sampleGrid() {
		t.Run(fmt.Sprintf("case%d_%dx%d_%dB_d%d_k%d", i, g.nodes, g.gpus, g.bytes, g.dtype, g.chunks), func(t *testing.T) {
			spec := Spec{Collective: c, Algorithm: alg, Topo: topo.SweepShape(g.nodes, g.gpus), Bytes: g.bytes, DtypeBytes: g.dtype, Chunks: g.chunks}
			if c == coll.Bcast {
				spec.Root = (g.nodes*g.gpus - 1) / 2
			}
			if c == coll.Allreduce && g.bytes >= 64<<20 && g.nodes*g.gpus > 16 {
				spec.Bytes /= 4 // keep the reduction grid quick
			}
			if unsupported != nil && unsupported(g.nodes*g.gpus) {
				_, err := Generate(spec)
				require.Error(t, err)
				assert.True(t, IsUnsupported(err), "want an UnsupportedError, got %v", err)
				return
			}
			plan, rep := mustVerify(t, spec)
			if check != nil {
				check(t, g, plan, rep)
			}
		})
	}
}

// GenerateFirst (package choose's choice and its fallback) walks past
// algorithms that cannot serve the spec and says which it chose and why
// it skipped the others.
func TestGenerateFirstFallsBackPastUnsupported(t *testing.T) {
	tp := topo.SweepShape(3, 1)
	spec := Spec{Collective: coll.Allgather, Topo: tp, Bytes: 4, DtypeBytes: 4}
	plan, err := GenerateFirst(spec, []string{"recursive_doubling", "neighbor", "no_such_algorithm", "bruck"})
	require.NoError(t, err)
	assert.Equal(t, "bruck", plan.Algorithm)
	assert.Equal(t, "chose bruck (skipped recursive_doubling: recursive doubling needs a power-of-two number of ranks, have 3; "+
		"neighbor: neighbor exchange needs an even number of ranks, have 3)", plan.Note)
	_, err = Verify(plan)
	require.NoError(t, err)

	// Explicitly named, the same algorithms fail with the documented reason.
	_, err = Generate(Spec{Collective: coll.Allgather, Algorithm: "neighbor", Topo: tp, Bytes: 4, DtypeBytes: 4})
	require.Error(t, err)
	assert.True(t, IsUnsupported(err))
	assert.EqualError(t, err, "algorithm neighbor: neighbor exchange needs an even number of ranks, have 3")

	// Nothing left: every reason is named.
	_, err = GenerateFirst(spec, []string{"recursive_doubling", "neighbor"})
	assert.ErrorContains(t, err, "no allgather algorithm serves this spec (recursive_doubling: ")

	// A spec names one algorithm: "auto" is package choose's, not sched's.
	_, err = Generate(Spec{Collective: coll.Allgather, Algorithm: "auto", Topo: tp, Bytes: 4, DtypeBytes: 4})
	assert.Error(t, err)
}

// One rank's program of the 4096-rank (1024 nodes x 4) flat ring: what a
// real rank builds, in O(its own steps).
func BenchmarkGenerateRankRing4096(b *testing.B) {
	spec := Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: topo.SweepShape(1024, 4), Bytes: 1 << 20, DtypeBytes: 4}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := GenerateRank(spec, 1234); err != nil {
			b.Fatal(err)
		}
	}
}

// A choice by GenerateFirst keeps the note the chosen algorithm wrote
// about itself.
func TestGenerateFirstKeepsAlgorithmNote(t *testing.T) {
	tp, err := topo.Preset("clusterA")
	require.NoError(t, err)
	tp, err = tp.Repeat(2)
	require.NoError(t, err)
	plan, err := GenerateFirst(Spec{Collective: coll.Allgather, Topo: tp, Bytes: 4096, DtypeBytes: 4}, []string{"parallel_rings", "ring"})
	require.NoError(t, err)
	assert.Contains(t, plan.Note, "chose parallel_rings")
	assert.Contains(t, plan.Note, "intra: auto chose congestion_aware")
}
