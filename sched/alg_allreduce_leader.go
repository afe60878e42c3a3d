package sched

import "github.com/goring-hpc/goring/coll"

// Leader allreduce: rank 0 reduces every rank's vector in rank order,
// ((v0 op v1) op v2) op ..., and hands the result to every rank. It is the
// algorithm for processes that share one GPU (docs/gpu.md "One process
// drives a shared GPU"): there every step of a process is a turn of the
// GPU between the processes' contexts, about 0.6 ms each on an H100, and
// the fastest schedule is the one in which a single context does all the
// device work. The team layer runs it that way (package onedevice): rank
// 0 maps the others' buffers and reads their inputs and writes their
// results itself, so the other processes put no work on the GPU at all.
//
// This file is the same algorithm as messages, which is how it runs where
// the processes do not share a device (host memory, several GPUs) and how
// the simulator and the scores see it: every rank sends its vector to rank
// 0, which reduces them into its dst as they come, in rank order, and
// sends the result back. MultiWrite section 3's rule, one copy per
// bottleneck link, is the principle: on a shared GPU the only link is its
// memory, and a single reduction whose result is written once to each
// destination crosses it the fewest times that one context can.
//
// Rank order makes every rank's result the same bits as a serial loop
// over the ranks (floating-point sums included). Scratch at rank 0: two
// vectors, which the peers' inputs take in turn (a slot is received into
// again once its last input has been reduced).

func init() {
	registerPerRank(Algorithm{
		Collective: coll.Allreduce,
		Name:       "leader",
		Desc:       "rank 0 reduces all vectors in rank order and returns the result; one GPU: rank 0 does every rank's device work",
		Paper:      "goring's shared-GPU leader (docs/gpu.md); MultiWrite section 3 (one copy per bottleneck link)",
		Rank:       allreduceLeaderRank,
	})
}

func allreduceLeaderRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	n, r, B := plan.NRanks, prog.Rank, spec.Bytes
	if r != 0 {
		prog.Sizes = Sizes{Src: B, Dst: B}
		prog.Send(0, leaderTagIn, At(BufSrc, 0), B, Path{})
		prog.Recv(0, leaderTagOut, At(BufDst, 0), B)
		return nil
	}
	prog.Sizes = Sizes{Src: B, Dst: B, Scratch: int64(min(n-1, 2)) * B}
	last := prog.Copy(At(BufSrc, 0), At(BufDst, 0), B)
	freed := [2]int{-1, -1} // the reduction that last read each slot
	for i := 1; i < n; i++ {
		k := (i - 1) % 2
		slot := At(BufScratch, int64(k)*B)
		got := prog.Recv(i, leaderTagIn, slot, B, freed[k])
		last = prog.Reduce(slot, At(BufDst, 0), B, last, got)
		freed[k] = last
	}
	for i := 1; i < n; i++ {
		prog.Send(i, leaderTagOut, At(BufDst, 0), B, Path{}, last)
	}
	return nil
}

// The leader algorithms' two tags: the inputs to rank 0, the results back.
const (
	leaderTagIn  = 0
	leaderTagOut = 1
)
