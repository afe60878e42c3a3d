package sched

import "github.com/goring-hpc/goring/coll"

// Rabenseifner allreduce (Rabenseifner 2004; Thakur, Rabenseifner and Gropp
// 2005; Multi-lane section 2 describes it: "each process reducing a fraction
// of the buffer before gathering all reductions", 2 log p messages):
// reduce-scatter by recursive halving, then allgather by recursive doubling.
//
// Any rank count: with P' the largest power of two <= P and rem = P - P',
// the first 2*rem ranks fold in pairs first (even rank r sends its whole
// vector to r+1, which reduces it and stands in for both), the P' remaining
// ranks run the power-of-two algorithm under new ranks 0..P'-1, and at the
// end each odd stand-in sends the result back to its even partner. That is
// the MPICH treatment of non-powers of two.
//
// Power-of-two part, over P' blocks of whole elements (BlockSpan):
//   - halving, mask = P'/2, P'/4, ..., 1: the rank keeps the lower half of
//     its current block range when (newrank & mask) == 0, else the upper;
//     it sends the other half to newrank^mask and reduces the half it keeps
//     with what arrives (through scratch). It ends owning block newrank.
//   - doubling, mask = 1, 2, ..., P'/2: it swaps its reduced range of mask
//     blocks with newrank^mask, straight into dst.
//
// There is no initial src -> dst copy: until a reduction has written dst the
// rank sends from src, and its first reducing receive lands in dst with the
// src half reduced into it (ops are commutative). That removed B bytes of
// memmove per rank and lets the first sends leave at once (19-23% faster at
// 1-4 MiB on 4 host processes, docs/results.md).

func init() {
	registerPerRank(Algorithm{
		Collective: coll.Allreduce,
		Name:       "rabenseifner",
		Desc:       "recursive-halving reduce-scatter + recursive-doubling allgather; non-powers of two fold pairs first",
		Paper:      "Multi-lane section 2 (Rabenseifner's algorithm)",
		Rank:       allreduceRabenseifnerRank,
	})
}

func allreduceRabenseifnerRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	n := plan.NRanks
	r := prog.Rank
	B := spec.Bytes
	elem := spec.DtypeBytes
	fold := newPow2Fold(n)
	p2 := fold.p2
	prog.Sizes = Sizes{Src: B, Dst: B}
	if n > 1 {
		prog.Sizes.Scratch = B
	}
	h := NewHazards(prog)
	if n == 1 {
		h.Copy(At(BufSrc, 0), At(BufDst, 0), B)
		return nil
	}
	cur := BufSrc // where this rank's partial vector is: src until a reduction writes dst
	// transfer moves span sp between this rank and peer in k pieces; recv
	// pieces go to 'into' (same offsets relative to sp) and, if reduce,
	// are reduced into dst at sp.
	type dir int
	const (
		sendOnly dir = iota
		recvOnly
		both
	)
	phase := 0
	var roundIDs []int // steps of the previous exchange: the next one waits for them (lock-step rounds)
	xfer := func(peer int, d dir, sendSp, recvSp Span, into Buf, reduce bool) {
		from := cur
		if reduce && cur == BufSrc {
			into = BufDst // first reduction: receive into dst, reduce src into it
		}
		kmax := max(ChunkCount(sendSp.Len, spec.Chunks, elem), ChunkCount(recvSp.Len, spec.Chunks, elem), 1)
		ks, kr := ChunkCount(sendSp.Len, spec.Chunks, elem), ChunkCount(recvSp.Len, spec.Chunks, elem)
		var prevRound []int
		prevRound = append(prevRound, roundIDs...)
		roundIDs = roundIDs[:0]
		for c := 0; c < kmax; c++ {
			tag := ChunkTag(phase, c, max(spec.Chunks, 1))
			if d != recvOnly && c < ks {
				sp := ChunkSpan(sendSp, ks, c, elem)
				roundIDs = append(roundIDs, h.Send(peer, tag, At(from, sp.Off), sp.Len, Path{}, prevRound...))
			}
			if d != sendOnly && c < kr {
				rp := ChunkSpan(recvSp, kr, c, elem)
				at := At(into, rp.Off)
				if into == BufScratch {
					at = At(BufScratch, rp.Off-recvSp.Off)
				}
				roundIDs = append(roundIDs, h.Recv(peer, tag, at, rp.Len, prevRound...))
				switch {
				case reduce && from == BufSrc:
					h.Reduce(At(BufSrc, rp.Off), at, rp.Len)
				case reduce:
					h.Reduce(at, At(BufDst, rp.Off), rp.Len)
				}
			}
		}
		phase++
		if reduce || d == recvOnly {
			cur = BufDst
		}
	}
	whole := Span{0, B}
	newrank := fold.newRank(r)
	switch {
	case fold.folded(r):
		xfer(r+1, sendOnly, whole, Span{}, BufDst, false)
	case fold.standsIn(r):
		xfer(r-1, recvOnly, Span{}, whole, BufScratch, true)
	}
	if newrank >= 0 {
		blocks := func(lo, hi int) Span {
			a, b := BlockSpan(B, p2, lo, elem), BlockSpan(B, p2, hi-1, elem)
			return Span{a.Off, b.End() - a.Off}
		}
		phase = 1
		lo, hi := 0, p2
		for mask := p2 / 2; mask >= 1; mask /= 2 {
			peer := fold.realRank(newrank ^ mask)
			mid := (lo + hi) / 2
			keep, give := blocks(lo, mid), blocks(mid, hi)
			if newrank&mask != 0 {
				keep, give = give, keep
				lo = mid
			} else {
				hi = mid
			}
			xfer(peer, both, give, keep, BufScratch, true)
		}
		for mask := 1; mask < p2; mask *= 2 {
			peer := newrank ^ mask
			mine := blocks(newrank&^(mask-1), newrank&^(mask-1)+mask)
			theirs := blocks(peer&^(mask-1), peer&^(mask-1)+mask)
			xfer(fold.realRank(peer), both, mine, theirs, BufDst, false)
		}
	}
	phase = 2 * (ceilLog2(n) + 2)
	switch {
	case fold.folded(r):
		xfer(r+1, recvOnly, Span{}, whole, BufDst, false)
	case fold.standsIn(r):
		xfer(r-1, sendOnly, whole, Span{}, BufDst, false)
	}
	return nil
}
