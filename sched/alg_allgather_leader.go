package sched

import "github.com/goring-hpc/goring/coll"

// Leader allgather: rank 0 collects every rank's block into its dst and
// sends the whole result to every rank. Like the leader allreduce
// (alg_allreduce_leader.go, which says why), it is the algorithm for
// processes that share one GPU, where the team layer runs it as one
// context's copies (package onedevice): rank 0 copies every block into
// every rank's dst through mappings, and the other processes put no work
// on the GPU. As messages (here) it serves the simulator and teams that
// do not share a device.

func init() {
	registerPerRank(Algorithm{
		Collective: coll.Allgather,
		Name:       "leader",
		Desc:       "rank 0 gathers every block and returns the whole result; one GPU: rank 0 does every rank's copies",
		Paper:      "goring's shared-GPU leader (docs/gpu.md); MultiWrite section 3 (one copy per bottleneck link)",
		Rank:       allgatherLeaderRank,
	})
}

func allgatherLeaderRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	n, r, B := plan.NRanks, prog.Rank, spec.Bytes
	prog.Sizes = Sizes{Src: B, Dst: int64(n) * B}
	if r != 0 {
		prog.Send(0, leaderTagIn, At(BufSrc, 0), B, Path{})
		prog.Recv(0, leaderTagOut, At(BufDst, 0), int64(n)*B)
		return nil
	}
	got := make([]int, n)
	got[0] = prog.Copy(At(BufSrc, 0), At(BufDst, 0), B)
	for i := 1; i < n; i++ {
		got[i] = prog.Recv(i, leaderTagIn, At(BufDst, int64(i)*B), B)
	}
	for i := 1; i < n; i++ {
		prog.Send(i, leaderTagOut, At(BufDst, 0), int64(n)*B, Path{}, got...)
	}
	return nil
}
