package sched

import "github.com/goring-hpc/goring/coll"

// Pairwise-exchange alltoallv (UCC tl/ucp "pairwise", Open MPI's pairwise
// alltoallv): in round s = 1..P-1 rank r sends its block for r+s and
// receives the block from r-s, so each round is a permutation and no rank
// is the target of two senders at once. The block for itself is a local
// copy. Rounds are lock-stepped (a sendrecv per round); zero-byte blocks
// move nothing.
//
// Layout (docs/contracts.md): src is packed by destination in rank order, dst by
// source in rank order; displacements are prefix sums of Counts
// (Counts[i][j] = bytes i sends j).

func init() {
	registerPerRank(Algorithm{
		Collective: coll.Alltoallv,
		Name:       "pairwise",
		Desc:       "pairwise exchange: P-1 rounds, round s sends to r+s and receives from r-s",
		Paper:      "NIMBLE section II baseline (pairwise All-to-Allv, as UCC tl/ucp)",
		Rank:       alltoallvPairwiseRank,
	})
}

// AlltoallvDispls returns rank r's send displacements (into src, by
// destination) and receive displacements (into dst, by source), each with a
// final entry holding the buffer size.
func AlltoallvDispls(counts [][]int64, r int) (send, recv []int64) {
	n := len(counts)
	col := make([]int64, n)
	for i := range counts {
		col[i] = counts[i][r]
	}
	return PrefixSums(counts[r]), PrefixSums(col)
}

func alltoallvPairwiseRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	n := plan.NRanks
	r := prog.Rank
	C := spec.Counts
	elem := spec.DtypeBytes
	sd, rd := AlltoallvDispls(C, r)
	prog.Sizes = Sizes{Src: sd[n], Dst: rd[n]}
	h := NewHazards(prog)
	if C[r][r] > 0 {
		h.Copy(At(BufSrc, sd[r]), At(BufDst, rd[r]), C[r][r])
	}
	kmax := max(spec.Chunks, 1)
	var prev []int
	for s := 1; s < n; s++ {
		to, from := (r+s)%n, (r-s+n)%n
		ks, kr := ChunkCount(C[r][to], spec.Chunks, elem), ChunkCount(C[from][r], spec.Chunks, elem)
		var ids []int
		for c := 0; c < max(ks, kr); c++ {
			tag := ChunkTag(s, c, kmax)
			if c < ks {
				sp := ChunkSpan(Span{sd[to], C[r][to]}, ks, c, elem)
				ids = append(ids, h.Send(to, tag, At(BufSrc, sp.Off), sp.Len, Path{}, prev...))
			}
			if c < kr {
				rp := ChunkSpan(Span{rd[from], C[from][r]}, kr, c, elem)
				ids = append(ids, h.Recv(from, tag, At(BufDst, rp.Off), rp.Len, prev...))
			}
		}
		if len(ids) > 0 {
			prev = ids
		}
	}
	return nil
}
