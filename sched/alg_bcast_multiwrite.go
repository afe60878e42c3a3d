package sched

import "github.com/goring-hpc/goring/coll"

// MultiWrite broadcast (seed 004 sections 3.2 and 4.3): the root multicasts
// the message with the relay planner of multiwrite.go. It writes every GPU
// of its own node directly and sends ONE copy to each remote node, over its
// own rail to the GPU of its local index there, which replicates it to its
// node. Each remote node's rail port therefore carries the message once,
// and every GPU gets it within two hops.
//
// What it does not do: switches do not replicate (section 1), so the
// root's own NIC sends N-1 copies, one per remote node; on many nodes a
// tree over nodes (knomial) keeps the root's port freer, and at small sizes
// the relay hop's extra startup (section 6.3's crossover) shows. Both are
// visible in `goring sim bcast --alg all`. Scratch: none; relays forward
// from their dst.

func init() {
	Register(Algorithm{
		Collective: coll.Bcast,
		Name:       "multiwrite",
		Desc:       "relay multicast from the root: one copy per remote node over the same-index rail, direct writes inside each node",
		Paper:      "seed 004 sections 3.2, 4.3 (MultiWrite same-index relay)",
		Generate:   func(spec *Spec, plan *Plan) error { return bcastMultiwrite(spec, plan, -1) },
		Rank: func(spec *Spec, plan *Plan, prog *RankProgram) error {
			return bcastMultiwrite(spec, plan, prog.Rank)
		},
	})
}

func bcastMultiwrite(spec *Spec, plan *Plan, only int) error {
	n := plan.NRanks
	all := NewBitmap(n)
	for r := 0; r < n; r++ {
		all.Set(r)
	}
	msg := func(int) (Multicast, Placement) {
		return Multicast{Src: spec.Root, Dests: all, Bytes: spec.Bytes}, Placement{From: At(BufSrc, 0)}
	}
	return lowerMulticastAlg("multiwrite", spec, plan, only, 1, msg, Sizes{Src: spec.Bytes, Dst: spec.Bytes}, RelayOptions{})
}
