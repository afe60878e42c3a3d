package sched

import "github.com/goring-hpc/goring/coll"

// Flat ring allgather, the baseline of Parallel Rings (section II: the ring that
// Open MPI and UCC's tl/ucp run, unaware of nodes and rails).
//
// Ranks form one ring 0 -> 1 -> ... -> P-1 -> 0 in rank order. In round s
// (0 <= s < P-1) rank r passes on the block it got in the previous round
// (its own in round 0: block r-s) to r+1 and receives block r-s-1 from r-1.
// Rounds are lock-stepped per piece, as a sendrecv per round is: round s+1
// of piece c starts when round s of piece c has both sent and received. So
// every round waits for its slowest link, which is why the flat ring has P-1
// inter-node steps on its critical path (Parallel Rings, Table I discussion).
//
// Layout: dst holds block j (rank j's Bytes) at j*Bytes.

func init() {
	registerPerRank(Algorithm{
		Collective: coll.Allgather,
		Name:       "ring",
		Desc:       "flat ring in rank order, P-1 lock-stepped rounds (Open MPI / UCC tl/ucp baseline)",
		Paper:      "Parallel Rings section II (flat ring baseline)",
		Rank:       allgatherRingRank,
	})
}

func allgatherRingRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	n := plan.NRanks
	r := prog.Rank
	B := spec.Bytes
	elem := spec.DtypeBytes
	prog.Sizes = Sizes{Src: B, Dst: int64(n) * B}
	prog.Copy(At(BufSrc, 0), At(BufDst, int64(r)*B), B)
	next, prev := (r+1)%n, (r-1+n)%n
	k := ChunkCount(B, spec.Chunks, elem)
	ls := newLockstep(k)
	for s := 0; s < n-1; s++ {
		sb := (r - s + n) % n
		rb := (r - s - 1 + n) % n
		for c := 0; c < k; c++ {
			piece := ChunkSpan(Span{0, B}, k, c, elem)
			src := At(BufDst, int64(sb)*B+piece.Off)
			if s == 0 {
				src = At(BufSrc, piece.Off) // own block: read the input, not the copy
			}
			tag := ChunkTag(s, c, k)
			deps := ls.deps(c)
			sid := prog.Send(next, tag, src, piece.Len, Path{}, deps...)
			rid := prog.Recv(prev, tag, At(BufDst, int64(rb)*B+piece.Off), piece.Len, deps...)
			ls.set(c, sid, rid)
		}
	}
	return nil
}
