package sched

import "github.com/goring-hpc/goring/coll"

// Recursive-doubling allgather (Thakur, Rabenseifner and Gropp 2005; UCC
// tl/ucp "recursive doubling" / knomial with radix 2), for a power-of-two
// number of ranks.
//
// In round k (distance d = 2^k) rank r swaps with r XOR d everything it has
// so far: the d blocks of its aligned group [r &^ (d-1), +d), which are
// contiguous in dst. After log2 P rounds every rank holds all P blocks.
// Rounds are lock-stepped per piece, as an MPI sendrecv per round is.

func init() {
	registerPerRank(Algorithm{
		Collective: coll.Allgather,
		Name:       "recursive_doubling",
		Desc:       "recursive doubling: log2 P rounds of doubling exchanges (power-of-two ranks)",
		Paper:      "Parallel Rings section II baselines (UCC tl/ucp recursive doubling)",
		Rank:       allgatherRecursiveDoublingRank,
	})
}

func allgatherRecursiveDoublingRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	n := plan.NRanks
	if !isPow2(n) {
		return Unsupported("recursive_doubling", "recursive doubling needs a power-of-two number of ranks, have %d", n)
	}
	h := startAllgather(spec, plan, prog)
	r, B, elem := prog.Rank, spec.Bytes, spec.DtypeBytes
	k := ChunkCount(B, spec.Chunks, elem)
	ls := newLockstep(k)
	for round, d := 0, 1; d < n; round, d = round+1, d*2 {
		peer := r ^ d
		mine := Span{int64(r&^(d-1)) * B, int64(d) * B}
		theirs := Span{int64(peer&^(d-1)) * B, int64(d) * B}
		for c := 0; c < k; c++ {
			sp := ChunkSpan(mine, k, c, elem)
			rp := ChunkSpan(theirs, k, c, elem)
			tag := ChunkTag(round, c, k)
			deps := ls.deps(c)
			sid := h.Send(peer, tag, At(BufDst, sp.Off), sp.Len, Path{}, deps...)
			rid := h.Recv(peer, tag, At(BufDst, rp.Off), rp.Len, deps...)
			ls.set(c, sid, rid)
		}
	}
	return nil
}
