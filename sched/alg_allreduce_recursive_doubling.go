package sched

import "github.com/goring-hpc/goring/coll"

// Recursive-doubling allreduce (Thakur, Rabenseifner and Gropp 2005,
// "Optimization of collective communication operations in MPICH", section
// 4.4: the algorithm MPICH uses for short messages; Multi-lane section 2
// lists it among the classic allreduce schedules): in round k = 0, 1, ...,
// log2 P - 1 every rank exchanges its whole partial vector with rank ^ 2^k
// and reduces what arrives into it. log2 P messages of B bytes per rank,
// against 2 log2 P shorter ones for Rabenseifner and 2(P-1) for the ring:
// more bytes moved and reduced, fewer handshakes. On a host where every
// message pays a rendezvous and, with more ranks than cores, a context
// switch, the handshakes can cost more than the bytes at a few MiB.
//
// Non-powers of two fold as in the Rabenseifner generator: with P' the
// largest power of two <= P and rem = P - P', even rank r < 2 rem sends its
// input to r+1 and waits for the result; odd r < 2 rem reduces it and takes
// part under new rank r/2; ranks from 2 rem on take part as r - rem.
//
// Buffers. The partial result alternates between scratch and dst so that a
// round's reduction never has to wait for the previous round's send to
// finish reading it: round j receives the peer's partial into buffer Y_j
// and reduces the previous partial (src for the first round) into it,
// Y_j op= Y_(j-1). Both operands are read by the send and the reduce at the
// same time, which is no hazard. The Y_j alternate so that the last one is
// dst; with two rounds (P = 4) both receives can be posted at the start of
// the call, and no initial src->dst copy is needed. Reduction operators are
// commutative (coll.Op), so "mine op theirs" and "theirs op mine" give the
// same result on both partners. Scratch: B bytes.
//
// Chunks > 1 splits every round's vector into pieces with their own tags,
// each reduced as soon as it arrives.

func init() {
	registerPerRank(Algorithm{
		Collective: coll.Allreduce,
		Name:       "recursive_doubling",
		Desc:       "log2 P exchanges of the whole vector with rank^2^k; non-powers of two fold pairs first",
		Paper:      "Thakur, Rabenseifner & Gropp 2005 section 4.4 (recursive doubling); Multi-lane section 2",
		Rank:       allreduceRecursiveDoublingRank,
	})
}

func allreduceRecursiveDoublingRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	n := plan.NRanks
	r := prog.Rank
	B := spec.Bytes
	elem := spec.DtypeBytes
	fold := newPow2Fold(n)
	prog.Sizes = Sizes{Src: B, Dst: B}
	if n > 1 && B > 0 {
		prog.Sizes.Scratch = B
	}
	h := NewHazards(prog)
	if n == 1 || B == 0 {
		h.Copy(At(BufSrc, 0), At(BufDst, 0), B)
		return nil
	}
	whole := Span{0, B}
	k := ChunkCount(B, spec.Chunks, elem)
	send := func(peer, round int, from Buf) {
		for c := 0; c < k; c++ {
			sp := ChunkSpan(whole, k, c, elem)
			h.Send(peer, ChunkTag(round, c, spec.Chunks), At(from, sp.Off), sp.Len, Path{})
		}
	}
	// recvReduce receives the peer's partial into 'into' and reduces the
	// local partial 'mine' into it, piece by piece.
	recvReduce := func(peer, round int, into, mine Buf) {
		for c := 0; c < k; c++ {
			sp := ChunkSpan(whole, k, c, elem)
			h.Recv(peer, ChunkTag(round, c, spec.Chunks), At(into, sp.Off), sp.Len)
			h.Reduce(At(mine, sp.Off), At(into, sp.Off), sp.Len)
		}
	}
	recv := func(peer, round int, into Buf) {
		for c := 0; c < k; c++ {
			sp := ChunkSpan(whole, k, c, elem)
			h.Recv(peer, ChunkTag(round, c, spec.Chunks), At(into, sp.Off), sp.Len)
		}
	}
	rounds := ceilLog2(fold.p2)
	last := rounds + 1 // tag round of the result sent back to a folded rank

	if fold.folded(r) { // hand the input over, get the result back
		send(r+1, 0, BufSrc)
		recv(r+1, last, BufDst)
		return nil
	}
	newrank := fold.newRank(r)
	reduces := rounds // reduce steps of this rank, each into a fresh Y_j
	if fold.standsIn(r) {
		reduces++
	}
	// Y_j for j = 1..reduces, the last one dst: alternate backwards.
	yBuf := func(j int) Buf {
		if (reduces-j)%2 == 0 {
			return BufDst
		}
		return BufScratch
	}
	cur, j := BufSrc, 0
	if fold.standsIn(r) {
		j++
		recvReduce(r-1, 0, yBuf(j), cur)
		cur = yBuf(j)
	}
	for round, mask := 1, 1; mask < fold.p2; round, mask = round+1, mask*2 {
		peer := fold.realRank(newrank ^ mask)
		j++
		send(peer, round, cur)
		recvReduce(peer, round, yBuf(j), cur)
		cur = yBuf(j)
	}
	if fold.standsIn(r) {
		send(r-1, last, BufDst)
	}
	return nil
}
