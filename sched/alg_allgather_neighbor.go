package sched

import "github.com/goring-hpc/goring/coll"

// Neighbor-exchange allgather (Chen et al. 2005; the "neighbor" algorithm of
// UCC's tl/ucp and Open MPI's base collectives), for an even number of ranks.
//
// Ranks pair up as (0,1), (2,3), ... and swap their blocks in round 0, so
// each holds the group of two blocks {2g, 2g+1} of its pair g = r/2. In
// rounds 1 .. P/2-1 every rank alternates between its other neighbour (odd
// rounds: even ranks talk to r-1, odd ranks to r+1) and its pair partner
// (even rounds), and passes on the group of two blocks it received in the
// previous round. So P/2 rounds instead of the ring's P-1, each moving two
// blocks after the first.
//
// The group a rank receives in round i >= 1 is, for pair g:
// even r: g-(i+1)/2 in odd rounds, g+i/2 in even rounds;
// odd r:  g+(i+1)/2 in odd rounds, g-i/2 in even rounds (mod P/2).
// (Even ranks grow their set of groups to the left first, odd ranks to the
// right, and the alternating partners always hold the group the other
// lacks.)

func init() {
	registerPerRank(Algorithm{
		Collective: coll.Allgather,
		Name:       "neighbor",
		Desc:       "neighbor exchange: P/2 rounds with alternating neighbours (even rank counts)",
		Paper:      "Parallel Rings section II baselines (UCC tl/ucp neighbor exchange)",
		Rank:       allgatherNeighborRank,
	})
}

func allgatherNeighborRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	n := plan.NRanks
	if n%2 != 0 {
		return Unsupported("neighbor", "neighbor exchange needs an even number of ranks, have %d", n)
	}
	h := startAllgather(spec, plan, prog)
	r, B, elem := prog.Rank, spec.Bytes, spec.DtypeBytes
	k := ChunkCount(B, spec.Chunks, elem)
	ls := newLockstep(2 * k) // slot = position in the group (0 low, 1 high) * k + piece
	pos := r % 2
	pair := r ^ 1
	// Round 0: swap single blocks with the pair partner.
	for c := 0; c < k; c++ {
		piece := ChunkSpan(Span{0, B}, k, c, elem)
		tag := ChunkTag(0, c, 2*k)
		sid := h.Send(pair, tag, At(BufSrc, piece.Off), piece.Len, Path{})
		rid := h.Recv(pair, tag, At(BufDst, int64(pair)*B+piece.Off), piece.Len)
		ls.set((1-pos)*k+c, sid, rid)
		ls.set(pos*k+c, sid, rid)
	}
	groups := n / 2
	g := r / 2
	sendG := g
	for i := 1; i < groups; i++ {
		var peer, recvG int
		if i%2 == 1 {
			if pos == 0 {
				peer, recvG = (r-1+n)%n, g-(i+1)/2
			} else {
				peer, recvG = (r+1)%n, g+(i+1)/2
			}
		} else {
			if pos == 0 {
				peer, recvG = pair, g+i/2
			} else {
				peer, recvG = pair, g-i/2
			}
		}
		recvG = ((recvG % groups) + groups) % groups
		for b := 0; b < 2; b++ {
			for c := 0; c < k; c++ {
				piece := ChunkSpan(Span{0, B}, k, c, elem)
				slot := b*k + c
				tag := ChunkTag(i, slot, 2*k)
				deps := ls.deps(slot)
				sid := h.Send(peer, tag, At(BufDst, int64(2*sendG+b)*B+piece.Off), piece.Len, Path{}, deps...)
				rid := h.Recv(peer, tag, At(BufDst, int64(2*recvG+b)*B+piece.Off), piece.Len, deps...)
				ls.set(slot, sid, rid)
			}
		}
		sendG = recvG
	}
	return nil
}
