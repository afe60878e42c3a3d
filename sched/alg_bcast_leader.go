package sched

import "github.com/goring-hpc/goring/coll"

// Leader broadcast: the root's buffer goes to every rank in one step. It
// is the algorithm for processes that share one GPU (alg_allreduce_leader.go
// says why), where the team layer has rank 0 copy the root's buffer into
// every rank's with one kernel (package onedevice). As messages (here),
// for the simulator and for teams that do not share a device, it is the
// flat tree: the root sends to every other rank.

func init() {
	registerPerRank(Algorithm{
		Collective: coll.Bcast,
		Name:       "leader",
		Desc:       "the root sends to every rank (a flat tree); one GPU: rank 0 copies the root's buffer into every rank's",
		Paper:      "goring's shared-GPU leader (docs/gpu.md); MultiWrite section 3 (one copy per bottleneck link)",
		Rank:       bcastLeaderRank,
	})
}

func bcastLeaderRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	n, r, root, B := plan.NRanks, prog.Rank, spec.Root, spec.Bytes
	prog.Sizes = Sizes{Src: B, Dst: B}
	if r != root {
		prog.Recv(root, leaderTagOut, At(BufDst, 0), B)
		return nil
	}
	prog.Copy(At(BufSrc, 0), At(BufDst, 0), B)
	for i := 0; i < n; i++ {
		if i != root {
			prog.Send(i, leaderTagOut, At(BufSrc, 0), B, Path{})
		}
	}
	return nil
}
