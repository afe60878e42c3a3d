package sched

import "github.com/goring-hpc/goring/coll"

// Ring reduce-scatter: the first half of Multi-lane Algorithm 1 (ring
// allreduce), with the vector made of P blocks of Bytes each (UCC's
// reduce_scatter counts each rank's output block).
//
// In round s (0 <= s < P-1) rank r sends its partial sum of block r-s-1 to
// r+1 (in round 0 its own src block) and receives r-1's partial sum of
// block r-s-2, which it reduces with its own src block. The block received
// in the last round is block r, now reduced over all P ranks: it lands in
// dst; earlier rounds accumulate in two alternating scratch slots (a round's
// receive may then start while the previous slot is still being sent).
// Rounds are lock-stepped per piece.

func init() {
	registerPerRank(Algorithm{
		Collective: coll.ReduceScatter,
		Name:       "ring",
		Desc:       "ring reduce-scatter: P-1 lock-stepped rounds of send, receive, reduce",
		Paper:      "Multi-lane Algorithm 1 (first loop)",
		Rank:       reduceScatterRingRank,
	})
}

func reduceScatterRingRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	n := plan.NRanks
	r := prog.Rank
	B := spec.Bytes
	elem := spec.DtypeBytes
	prog.Sizes = Sizes{Src: int64(n) * B, Dst: B}
	if n > 2 {
		prog.Sizes.Scratch = 2 * B
	}
	h := NewHazards(prog)
	if n == 1 {
		h.Copy(At(BufSrc, 0), At(BufDst, 0), B)
		return nil
	}
	next, prev := (r+1)%n, (r-1+n)%n
	k := ChunkCount(B, spec.Chunks, elem)
	ls := newLockstep(k)
	mod := func(x int) int { return ((x % n) + n) % n }
	for s := 0; s < n-1; s++ {
		sb := mod(r - s - 1) // block sent: partial sum from the previous round
		rb := mod(r - s - 2) // block received and reduced this round
		last := s == n-2
		for c := 0; c < k; c++ {
			piece := ChunkSpan(Span{0, B}, k, c, elem)
			src := At(BufScratch, int64((s-1)%2)*B+piece.Off)
			if s == 0 {
				src = At(BufSrc, int64(sb)*B+piece.Off)
			}
			into := At(BufScratch, int64(s%2)*B+piece.Off)
			if last {
				into = At(BufDst, piece.Off)
			}
			tag := ChunkTag(s, c, k)
			deps := ls.deps(c)
			sid := h.Send(next, tag, src, piece.Len, Path{}, deps...)
			rid := h.Recv(prev, tag, into, piece.Len, deps...)
			h.Reduce(At(BufSrc, int64(rb)*B+piece.Off), into, piece.Len)
			ls.set(c, sid, rid)
		}
	}
	return nil
}
