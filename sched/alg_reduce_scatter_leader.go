package sched

import "github.com/goring-hpc/goring/coll"

// Leader reduce-scatter: rank 0 reduces every rank's whole input (P blocks
// of Bytes) in rank order and hands each rank its block. It is the
// algorithm for processes that share one GPU (alg_allreduce_leader.go says
// why), where the team layer runs it as one kernel per block over every
// rank's mapped input (package onedevice). As messages (here), for the
// simulator and for teams that do not share a device: rank 0 copies its
// input into an accumulator, reduces every peer's input into it as it
// arrives (two slots the inputs take in turn), and sends block r to rank
// r. Scratch at rank 0: the accumulator and the two slots, 3 P Bytes.

func init() {
	registerPerRank(Algorithm{
		Collective: coll.ReduceScatter,
		Name:       "leader",
		Desc:       "rank 0 reduces every input in rank order and returns each rank its block; one GPU: rank 0 does every rank's device work",
		Paper:      "goring's shared-GPU leader (docs/gpu.md); MultiWrite section 3 (one copy per bottleneck link)",
		Rank:       reduceScatterLeaderRank,
	})
}

func reduceScatterLeaderRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	n, r, B := plan.NRanks, prog.Rank, spec.Bytes
	V := int64(n) * B // a whole input
	if r != 0 {
		prog.Sizes = Sizes{Src: V, Dst: B}
		prog.Send(0, leaderTagIn, At(BufSrc, 0), V, Path{})
		prog.Recv(0, leaderTagOut, At(BufDst, 0), B)
		return nil
	}
	if n == 1 {
		prog.Sizes = Sizes{Src: V, Dst: B}
		prog.Copy(At(BufSrc, 0), At(BufDst, 0), B)
		return nil
	}
	prog.Sizes = Sizes{Src: V, Dst: B, Scratch: int64(1+min(n-1, 2)) * V}
	acc := At(BufScratch, 0)
	last := prog.Copy(At(BufSrc, 0), acc, V)
	freed := [2]int{-1, -1}
	for i := 1; i < n; i++ {
		k := (i - 1) % 2
		slot := At(BufScratch, int64(1+k)*V)
		got := prog.Recv(i, leaderTagIn, slot, V, freed[k])
		last = prog.Reduce(slot, acc, V, last, got)
		freed[k] = last
	}
	prog.Copy(At(BufScratch, 0), At(BufDst, 0), B, last)
	for i := 1; i < n; i++ {
		prog.Send(i, leaderTagOut, At(BufScratch, int64(i)*B), B, Path{}, last)
	}
	return nil
}
