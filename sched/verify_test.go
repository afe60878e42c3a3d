package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/topo"
)

// handPlan is an empty plan of n ranks, one rank per node.
func handPlan(c coll.Collective, n int, bytes int64, z Sizes) *Plan {
	p := &Plan{Collective: c, Algorithm: "hand", NRanks: n, Bytes: bytes, DtypeBytes: 4, Ranks: make([]RankProgram, n)}
	for r := range p.Ranks {
		p.Ranks[r] = RankProgram{Rank: r, Node: r, Sizes: z}
	}
	return p
}

// twoRankAllgather is a correct allgather of 8 bytes per rank over 2 ranks;
// the cases below break it one way each.
func twoRankAllgather() *Plan {
	p := handPlan(coll.Allgather, 2, 8, Sizes{Src: 8, Dst: 16})
	for r := 0; r < 2; r++ {
		q := &p.Ranks[r]
		q.Copy(At(BufSrc, 0), At(BufDst, int64(r)*8), 8)
		q.Send(1-r, 0, At(BufSrc, 0), 8, Path{})
		q.Recv(1-r, 0, At(BufDst, int64(1-r)*8), 8)
	}
	return p
}

func TestVerifyAcceptsHandBuiltPlans(t *testing.T) {
	rep, err := Verify(twoRankAllgather())
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Transfers)
	assert.Equal(t, 2, rep.InterNodeTransfers)
	assert.Equal(t, 1, rep.CriticalTransfers)
	assert.Equal(t, 1, rep.CriticalInterNode)
	assert.Equal(t, []int64{8, 8}, rep.SentBytes)

	// Allreduce of 2 elements over 2 ranks: exchange into scratch, reduce.
	p := handPlan(coll.Allreduce, 2, 8, Sizes{Src: 8, Dst: 8, Scratch: 8})
	for r := 0; r < 2; r++ {
		q := &p.Ranks[r]
		c := q.Copy(At(BufSrc, 0), At(BufDst, 0), 8)
		q.Send(1-r, 7, At(BufSrc, 0), 8, Path{})
		rv := q.Recv(1-r, 7, At(BufScratch, 0), 8)
		q.Reduce(At(BufScratch, 0), At(BufDst, 0), 8, c, rv)
	}
	_, err = Verify(p)
	require.NoError(t, err)
}

// Each case breaks a correct plan in one way; Verify must name the fault.
func TestVerifyRejectsBrokenPlans(t *testing.T) {
	cases := []struct {
		name  string
		build func() *Plan
		kind  string
		want  string
	}{
		{"1 unmatched send", func() *Plan {
			p := twoRankAllgather()
			p.Ranks[0].Send(1, 9, At(BufSrc, 0), 8, Path{})
			return p
		}, "match", "rank 0 step 3 (send to 1 tag 9, src[0,8)) has no matching recv"},
		{"2 unmatched recv", func() *Plan {
			p := twoRankAllgather()
			p.Ranks[1].Recv(0, 5, At(BufDst, 0), 8)
			return p
		}, "match", "rank 1 step 3 (recv from 0 tag 5, dst[0,8)) has no matching send"},
		{"3 length mismatch", func() *Plan {
			p := twoRankAllgather()
			p.Ranks[0].Steps[1].Len = 4
			return p
		}, "match", "sends 4 bytes but its matching rank 1 step 2 (recv from 0 tag 0, dst[0,8)) receives 8"},
		{"4 deadlock cycle", func() *Plan {
			p := handPlan(coll.Allgather, 2, 8, Sizes{Src: 8, Dst: 16})
			for r := 0; r < 2; r++ {
				q := &p.Ranks[r]
				q.Copy(At(BufSrc, 0), At(BufDst, int64(r)*8), 8)
				rv := q.Recv(1-r, 0, At(BufDst, int64(1-r)*8), 8)
				q.Send(1-r, 0, At(BufSrc, 0), 8, Path{}, rv) // waits for its own recv: a cycle
			}
			return p
		}, "deadlock", "rank 0: step 1 (recv from 1 tag 0) waits for rank 1 step 2"},
		{"5 racing writes", func() *Plan {
			p := twoRankAllgather()
			p.Ranks[0].Copy(At(BufSrc, 0), At(BufDst, 8), 8) // concurrent with the recv into dst[8,16)
			return p
		}, "race", "both write dst[8,16)"},
		{"6 read of concurrently written bytes", func() *Plan {
			p := twoRankAllgather()
			p.Ranks[0].Steps = p.Ranks[0].Steps[:0]
			p.Ranks[0].deps = nil
			q := &p.Ranks[0]
			q.Copy(At(BufSrc, 0), At(BufDst, 0), 8)
			q.Send(1, 0, At(BufDst, 0), 8, Path{}) // reads dst[0,8) without waiting for the copy
			q.Recv(1, 0, At(BufDst, 8), 8)
			return p
		}, "race", "the second reads dst[0,8) that the first writes"},
		{"7 wrong final content", func() *Plan {
			p := twoRankAllgather()
			p.Ranks[1].Steps[2].DstOff = 8 // rank 0's block lands on rank 1's own block
			p.Ranks[1].Steps[0].DstOff = 0
			return p
		}, "content", "rank 1 dst[0,8) holds rank 1's src at 0, want rank 0's src at 0"},
		{"8 missing block", func() *Plan {
			p := twoRankAllgather()
			p.Ranks[1].Steps[0].Len = 4
			return p
		}, "content", "rank 1 dst[12,16) holds nothing (never written), want rank 1's src at 4"},
		{"9 read outside buffer", func() *Plan {
			p := twoRankAllgather()
			p.Ranks[0].Steps[1].SrcOff = 4
			return p
		}, "bounds", "reads [4,12) outside src buffer of 8 bytes"},
		{"10 write into src", func() *Plan {
			p := twoRankAllgather()
			p.Ranks[0].Steps[2].DstBuf = BufSrc
			p.Ranks[0].Steps[2].DstOff = 0
			return p
		}, "bounds", "writes the src buffer"},
		{"11 send to self", func() *Plan {
			p := twoRankAllgather()
			p.Ranks[0].Steps[1].Peer = 0
			return p
		}, "structure", "a rank cannot send to itself"},
		{"12 reduction counted twice", func() *Plan {
			p := handPlan(coll.Allreduce, 2, 8, Sizes{Src: 8, Dst: 8, Scratch: 8})
			for r := 0; r < 2; r++ {
				q := &p.Ranks[r]
				c := q.Copy(At(BufSrc, 0), At(BufDst, 0), 8)
				q.Send(1-r, 7, At(BufSrc, 0), 8, Path{})
				rv := q.Recv(1-r, 7, At(BufScratch, 0), 8)
				x := q.Reduce(At(BufScratch, 0), At(BufDst, 0), 8, c, rv)
				q.Reduce(At(BufScratch, 0), At(BufDst, 0), 8, x)
			}
			return p
		}, "content", "'s contribution at origin offset 0 would be reduced twice"},
		{"13 misaligned reduction", func() *Plan {
			p := handPlan(coll.Allreduce, 2, 8, Sizes{Src: 8, Dst: 8, Scratch: 12})
			for r := 0; r < 2; r++ {
				q := &p.Ranks[r]
				c := q.Copy(At(BufSrc, 0), At(BufDst, 0), 8)
				q.Send(1-r, 7, At(BufSrc, 0), 8, Path{})
				rv := q.Recv(1-r, 7, At(BufScratch, 2), 8)
				q.Reduce(At(BufScratch, 0), At(BufDst, 0), 8, c, rv)
			}
			return p
		}, "content", "whose source was never written"},
		{"14 reduction of different elements", func() *Plan {
			p := handPlan(coll.Allreduce, 2, 8, Sizes{Src: 8, Dst: 8, Scratch: 12})
			for r := 0; r < 2; r++ {
				q := &p.Ranks[r]
				c := q.Copy(At(BufSrc, 0), At(BufDst, 0), 8)
				q.Send(1-r, 7, At(BufSrc, 0), 8, Path{})
				rv := q.Recv(1-r, 7, At(BufScratch, 4), 8)
				q.Reduce(At(BufScratch, 8), At(BufDst, 0), 4, c, rv)
			}
			return p
		}, "content", "it combines rank 1's src at 0 with rank 0's src at 4 (different elements)"},
		{"15 partial reduction", func() *Plan {
			p := handPlan(coll.Allreduce, 3, 8, Sizes{Src: 8, Dst: 8, Scratch: 8})
			for r := 0; r < 3; r++ {
				q := &p.Ranks[r]
				q.Copy(At(BufSrc, 0), At(BufDst, 0), 8)
			}
			return p
		}, "content", "rank 0 dst[0,8) holds rank 0's src at 0, want origin offset 0 reduced over all 3 ranks"},
		{"16 wrong plan rank count", func() *Plan {
			p := twoRankAllgather()
			p.NRanks = 3
			return p
		}, "structure", "plan says 3 ranks but has 2 programs"},
		{"17 unaligned element bytes in reduce", func() *Plan {
			p := handPlan(coll.Allreduce, 2, 8, Sizes{Src: 8, Dst: 8, Scratch: 8})
			p.DtypeBytes = 4
			for r := 0; r < 2; r++ {
				q := &p.Ranks[r]
				c := q.Copy(At(BufSrc, 0), At(BufDst, 0), 8)
				q.Send(1-r, 7, At(BufSrc, 0), 8, Path{})
				rv := q.Recv(1-r, 7, At(BufScratch, 0), 8)
				q.Reduce(At(BufScratch, 0), At(BufDst, 0), 6, c, rv)
			}
			return p
		}, "content", "length is not a whole number of 4-byte elements"},
		{"18 element of 3 bytes", func() *Plan {
			p := twoRankAllgather()
			p.DtypeBytes = 3
			return p
		}, "structure", "dtype_bytes 3: want 1, 2, 4 or 8"},
		{"19 negative tag", func() *Plan {
			p := twoRankAllgather()
			for r := range p.Ranks {
				for i := range p.Ranks[r].Steps {
					if s := &p.Ranks[r].Steps[i]; s.Op == OpSend || s.Op == OpRecv {
						s.Tag = -2
					}
				}
			}
			return p
		}, "structure", "negative tag -2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Verify(c.build())
			require.Error(t, err)
			var ve *VerifyError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, c.kind, ve.Kind, "%v", err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// Many concurrent steps touching one scratch slot in a chain must stay
// fast (the race check is not quadratic in practice) and pass.
func TestVerifyLongChainIsFast(t *testing.T) {
	const n = 4000
	p := handPlan(coll.Allreduce, 2, 8, Sizes{Src: 8, Dst: 8, Scratch: 8})
	// Rank pairs exchange partial sums n times through one scratch slot;
	// only the first exchange contributes, later ones move zero bytes.
	for r := 0; r < 2; r++ {
		q := &p.Ranks[r]
		c := q.Copy(At(BufSrc, 0), At(BufDst, 0), 8)
		q.Send(1-r, 0, At(BufSrc, 0), 8, Path{})
		last := q.Recv(1-r, 0, At(BufScratch, 0), 8)
		last = q.Reduce(At(BufScratch, 0), At(BufDst, 0), 8, c, last)
		for i := 1; i < n; i++ {
			s := q.Send(1-r, i, At(BufDst, 0), 0, Path{}, last)
			last = q.Recv(1-r, i, At(BufScratch, 0), 0, last)
			last = q.Copy(At(BufScratch, 0), At(BufScratch, 4), 0, last, s)
		}
	}
	rep, err := Verify(p)
	require.NoError(t, err)
	assert.Equal(t, n, rep.CriticalTransfers)
}

// Verify alone on the 64-rank (16 nodes x 4 GPUs) parallel rings allgather
// of the Parallel Rings paper's largest run, and on the flat ring of the same size.
func BenchmarkVerify64(b *testing.B) {
	for _, alg := range []string{"parallel_rings", "ring"} {
		b.Run(alg, func(b *testing.B) {
			plan, err := Generate(Spec{Collective: coll.Allgather, Algorithm: alg, Topo: topo.SweepShape(16, 4), Bytes: 64 << 20, DtypeBytes: 4})
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Verify(plan); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(plan.Ranks[0].Steps)*len(plan.Ranks)), "steps/op")
		})
	}
}

func TestLevelsAndPartners(t *testing.T) {
	p := twoRankAllgather()
	lv, err := Levels(p)
	require.NoError(t, err)
	// copy, send, recv all start at once.
	assert.Equal(t, [][]int32{{0, 0, 0}, {0, 0, 0}}, lv)
	pt, err := Partners(p)
	require.NoError(t, err)
	assert.Equal(t, [][]int32{{-1, 2, 1}, {-1, 2, 1}}, pt)

	plan, err := Generate(Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: topo.SweepShape(1, 4), Bytes: 4, DtypeBytes: 4})
	require.NoError(t, err)
	lv, err = Levels(plan)
	require.NoError(t, err)
	// Ring rounds are lock-stepped: round s sits at level s.
	assert.Equal(t, []int32{0, 0, 0, 1, 1, 2, 2}, lv[2])

	broken := twoRankAllgather()
	broken.Ranks[0].Steps[1].Tag = 5
	_, err = Levels(broken)
	assert.ErrorContains(t, err, "has no matching")
}

// Above raceMaxBitsetSteps the race check computes ancestors on demand; it
// must find the same races and accept the same plans.
func TestRaceCheckOnDemandMode(t *testing.T) {
	saved := raceMaxBitsetSteps
	raceMaxBitsetSteps = 1
	defer func() { raceMaxBitsetSteps = saved }()
	p := twoRankAllgather()
	p.Ranks[0].Copy(At(BufSrc, 0), At(BufDst, 8), 8)
	_, err := Verify(p)
	assert.ErrorContains(t, err, "both write dst[8,16)")
	for _, alg := range []string{"rabenseifner", "ring"} {
		_, err = Verify(mustGenerate(t, Spec{Collective: coll.Allreduce, Algorithm: alg, Topo: topo.SweepShape(3, 2), Bytes: 400, DtypeBytes: 4, Chunks: 3}))
		assert.NoError(t, err, alg)
	}
}

func mustGenerate(t *testing.T, spec Spec) *Plan {
	t.Helper()
	p, err := Generate(spec)
	require.NoError(t, err)
	return p
}

// A big flat plan: 512 ranks of ring allgather (261 632 transfers).
func BenchmarkVerifyRing512(b *testing.B) {
	plan, err := Generate(Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: topo.SweepShape(64, 8), Bytes: 1 << 20, DtypeBytes: 4})
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(plan); err != nil {
			b.Fatal(err)
		}
	}
}

// The executor posts the sends (recvs) of one (peer, tag) in ascending step
// id: a later one waits until the earlier one is posted, whatever its deps
// say. Here rank 0's second tag-5 send is free to go, but the first waits
// for rank 1's tag-1 send, which waits for the second: under that posting
// rule nothing moves, so Verify must call it a deadlock.
func TestVerifyDeadlockBehindSameTagPost(t *testing.T) {
	p := handPlan(coll.Allgather, 2, 4, Sizes{Src: 4, Dst: 8})
	a, b := &p.Ranks[0], &p.Ranks[1]
	a.Copy(At(BufSrc, 0), At(BufDst, 0), 4)
	got := a.Recv(1, 1, At(BufDst, 4), 4)
	a.Send(1, 5, At(BufSrc, 0), 2, Path{}, got)
	a.Send(1, 5, At(BufSrc, 2), 2, Path{})
	b.Copy(At(BufSrc, 0), At(BufDst, 4), 4)
	b.Recv(0, 5, At(BufDst, 0), 2)
	second := b.Recv(0, 5, At(BufDst, 2), 2)
	b.Send(0, 1, At(BufSrc, 0), 4, Path{}, second)
	_, err := Verify(p)
	require.Error(t, err)
	var ve *VerifyError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "deadlock", ve.Kind, "%v", err)
	assert.Contains(t, err.Error(), "same peer and tag")

	// With rank 1's tag-1 send free to go, the plan completes.
	b.Steps = b.Steps[:3]
	b.Send(0, 1, At(BufSrc, 0), 4, Path{})
	_, err = Verify(p)
	require.NoError(t, err)
}

// A combine reduce must add whole elements, as every other reduction's:
// adding the bytes of an element in two pieces is not adding the element
// (and the executor refuses such a step). The single rank here owns one
// token whose two experts it also holds, so combine sums its two slot
// rows into the token's row.
func TestVerifyCombineRejectsMisalignedReduce(t *testing.T) {
	ro := &moe.Routing{TokenBytes: 8, TopK: 2, Tokens: []int{1}, Experts: []int32{0, 1}, Placement: []int{0, 0}}
	build := func(split int64) *Plan {
		p := handPlan(coll.Combine, 1, 8, Sizes{Src: 16, Dst: 8})
		p.Routing = ro
		q := &p.Ranks[0]
		c := q.Copy(At(BufSrc, 0), At(BufDst, 0), 8)
		a := q.Reduce(At(BufSrc, 8), At(BufDst, 0), split, c)
		q.Reduce(At(BufSrc, 8+split), At(BufDst, split), 8-split, a)
		return p
	}
	_, err := Verify(build(4))
	require.NoError(t, err)
	_, err = Verify(build(2))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "element")
}
