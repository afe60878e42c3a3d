package sched

import "github.com/goring-hpc/goring/coll"

// Ring allreduce, seed 001 Algorithm 1.
//
// The vector splits into P blocks of whole elements (BlockSpan: as even as
// elements allow, so any size of at least one element works; blocks may be
// empty when there are fewer elements than ranks, and empty blocks move
// nothing). src is copied into dst once; then
//   - reduce-scatter, rounds s = 0..P-2: send block r-s to r+1 (sp in the
//     paper, starting at r), receive block r-s-1 (rp) from r-1 into a
//     scratch slot and reduce it into dst; after P-1 rounds dst holds block
//     r+1 reduced over all ranks;
//   - allgather, rounds s = 0..P-2: send block r+1-s, receive block r-s
//     straight into dst (the paper's second loop, sp = r+1, rp = r).
// Rounds are lock-stepped per piece (the paper's MPI_Waitall per round).
// Two scratch slots of the largest block alternate between rounds.

func init() {
	registerPerRank(Algorithm{
		Collective: coll.Allreduce,
		Name:       "ring",
		Desc:       "ring allreduce: ring reduce-scatter then ring allgather, 2(P-1) rounds",
		Paper:      "seed 001 Algorithm 1",
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
	if n > 1 {
		prog.Sizes.Scratch = 2 * maxBlock
	}
	h := NewHazards(prog.Sizes)
	h.Copy(prog, At(BufSrc, 0), At(BufDst, 0), B)
	if n == 1 {
		return nil
	}
	next, prev := (r+1)%n, (r-1+n)%n
	mod := func(x int) int { return ((x % n) + n) % n }
	kmax := max(1, ChunkCount(maxBlock, spec.Chunks, elem))
	ls := newLockstep(kmax)
	for s := 0; s < n-1; s++ {
		sb, rb := BlockSpan(B, n, mod(r-s), elem), BlockSpan(B, n, mod(r-s-1), elem)
		slot := int64(s%2) * maxBlock
		// The block sent in round 0 is still intact in src; later ones are
		// partial sums in dst.
		sendBuf := BufDst
		if s == 0 {
			sendBuf = BufSrc
		}
		ks, kr := ChunkCount(sb.Len, spec.Chunks, elem), ChunkCount(rb.Len, spec.Chunks, elem)
		for c := 0; c < max(ks, kr); c++ {
			tag := ChunkTag(s, c, kmax)
			deps := ls.deps(c)
			var ids []int
			if c < ks {
				sp := ChunkSpan(sb, ks, c, elem)
				ids = append(ids, h.Send(prog, next, tag, At(sendBuf, sp.Off), sp.Len, Path{}, deps...))
			}
			if c < kr {
				rp := ChunkSpan(rb, kr, c, elem)
				tmp := At(BufScratch, slot+rp.Off-rb.Off)
				ids = append(ids, h.Recv(prog, prev, tag, tmp, rp.Len, deps...))
				h.Reduce(prog, tmp, At(BufDst, rp.Off), rp.Len)
			}
			ls.set(c, ids...)
		}
	}
	for s := 0; s < n-1; s++ {
		sb, rb := BlockSpan(B, n, mod(r+1-s), elem), BlockSpan(B, n, mod(r-s), elem)
		ks, kr := ChunkCount(sb.Len, spec.Chunks, elem), ChunkCount(rb.Len, spec.Chunks, elem)
		for c := 0; c < max(ks, kr); c++ {
			tag := ChunkTag(n-1+s, c, kmax)
			deps := ls.deps(c)
			var ids []int
			if c < ks {
				sp := ChunkSpan(sb, ks, c, elem)
				ids = append(ids, h.Send(prog, next, tag, At(BufDst, sp.Off), sp.Len, Path{}, deps...))
			}
			if c < kr {
				rp := ChunkSpan(rb, kr, c, elem)
				ids = append(ids, h.Recv(prog, prev, tag, At(BufDst, rp.Off), rp.Len, deps...))
			}
			ls.set(c, ids...)
		}
	}
	return nil
}
