package sched

import "github.com/goring-hpc/goring/coll"

// MultiWrite broadcast (MultiWrite sections 3.2 and 4.3.3): the root
// multicasts the message with the relay planner of multiwrite.go. It
// writes every GPU of its own node directly; across nodes the bitmap is
// split in halves (RelayOptions.NodeTree): the root sends ONE copy to the
// GPU of its own local index on the first node of the far half, carrying
// that half's part of the bitmap, and goes on with the near half; every
// relay does the same with its part (the recursive execution of section
// 4.3.3) and writes its own node's GPUs. Each node's rail port receives the
// message once, and the root's port sends ceil(log2 N) copies instead of
// the N-1 of a flat fan-out (switches do not replicate, section 1).
// Copies through one port go one after another so the first relay starts
// forwarding early; pieces (Spec.Chunks) pipeline through every relay.
//
// At small sizes each relay level adds its startups (section 6.3's
// crossover); `goring sim bcast --alg all` shows where knomial wins.
// Scratch: none; relays forward from their dst.

func init() {
	registerWholePlan(Algorithm{
		Collective: coll.Bcast,
		Name:       "multiwrite",
		Desc:       "relay multicast from the root: one copy per remote node over the same-index rail, direct writes inside each node",
		Paper:      "MultiWrite sections 3.2, 4.3 (MultiWrite same-index relay)",
	}, bcastMultiwrite)
}

func bcastMultiwrite(spec *Spec, plan *Plan, only int) error {
	all := FullBitmap(plan.NRanks)
	msg := func(int) (Multicast, Placement) {
		return Multicast{Src: spec.Root, Dests: all, Bytes: spec.Bytes}, Placement{From: At(BufSrc, 0)}
	}
	return lowerMulticastAlg("multiwrite", spec, plan, only, 1, msg, Sizes{Src: spec.Bytes, Dst: spec.Bytes}, RelayOptions{NodeTree: true})
}
