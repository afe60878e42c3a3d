package sched

import "github.com/goring-hpc/goring/coll"

// Ring allreduce, Multi-lane Algorithm 1.
//
// The vector splits into P blocks of whole elements (BlockSpan: as even as
// elements allow, so any size of at least one element works; blocks may be
// empty when there are fewer elements than ranks, and empty blocks move
// nothing). There is no initial src -> dst copy (it cost B bytes of memmove
// per rank and held the first send back until it finished):
//   - reduce-scatter, rounds s = 0..P-2: send block r-s to r+1 (sp in the
//     paper, starting at r; round 0's block is still intact in src), receive
//     block r-s-1 (rp) from r-1 straight into dst and reduce this rank's src
//     block into it (every op is commutative, and each block is received
//     exactly once here, so dst[rp] = recv op src[rp]); after P-1 rounds dst
//     holds block r+1 reduced over all ranks;
//   - allgather, rounds s = 0..P-2: send block r+1-s, receive block r-s
//     straight into dst (the paper's second loop, sp = r+1, rp = r).
// Block r of dst is never received in the first loop; the allgather's first
// round fills it. Rounds are lock-stepped per piece (the paper's
// MPI_Waitall per round). No scratch memory.

func init() {
	registerPerRank(Algorithm{
		Collective: coll.Allreduce,
		Name:       "ring",
		Desc:       "ring allreduce: ring reduce-scatter then ring allgather, 2(P-1) rounds",
		Paper:      "Multi-lane Algorithm 1",
		Rank:       allreduceRingRank,
	})
}

func allreduceRingRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	n := plan.NRanks
	r := prog.Rank
	B := spec.Bytes
	elem := spec.DtypeBytes
	maxBlock := MaxBlockLen(B, n, elem)
	prog.Sizes = Sizes{Src: B, Dst: B}
	h := NewHazards(prog)
	if n == 1 {
		h.Copy(At(BufSrc, 0), At(BufDst, 0), B)
		return nil
	}
	next, prev := (r+1)%n, (r-1+n)%n
	mod := func(x int) int { return ((x % n) + n) % n }
	kmax := max(1, ChunkCount(maxBlock, spec.Chunks, elem))
	ls := newLockstep(kmax)
	// exchange is one round, lock-stepped per piece: block sb, read from
	// buffer from, goes to next; block rb comes from prev straight into dst,
	// and with reduce the rank's own src block is reduced into it.
	exchange := func(round int, sb Span, from Buf, rb Span, reduce bool) {
		ks, kr := ChunkCount(sb.Len, spec.Chunks, elem), ChunkCount(rb.Len, spec.Chunks, elem)
		for c := 0; c < max(ks, kr); c++ {
			tag := ChunkTag(round, c, kmax)
			deps := ls.deps(c)
			var ids []int
			if c < ks {
				sp := ChunkSpan(sb, ks, c, elem)
				ids = append(ids, h.Send(next, tag, At(from, sp.Off), sp.Len, Path{}, deps...))
			}
			if c < kr {
				rp := ChunkSpan(rb, kr, c, elem)
				ids = append(ids, h.Recv(prev, tag, At(BufDst, rp.Off), rp.Len, deps...))
				if reduce {
					h.Reduce(At(BufSrc, rp.Off), At(BufDst, rp.Off), rp.Len)
				}
			}
			ls.set(c, ids...)
		}
	}
	block := func(i int) Span { return BlockSpan(B, n, mod(i), elem) }
	for s := 0; s < n-1; s++ {
		// The block sent in round 0 is still intact in src; later ones are
		// partial sums in dst.
		from := BufDst
		if s == 0 {
			from = BufSrc
		}
		exchange(s, block(r-s), from, block(r-s-1), true)
	}
	for s := 0; s < n-1; s++ {
		exchange(n-1+s, block(r+1-s), BufDst, block(r-s), false)
	}
	return nil
}
