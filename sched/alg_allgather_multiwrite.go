package sched

import "github.com/goring-hpc/goring/coll"

// MultiWrite allgather (MultiWrite sections 3.2, 4.3.3 and 5.2): every rank
// multicasts its block to all others with the relay planner of
// multiwrite.go. Across nodes a block goes ONCE to every remote node, over
// the source's own rail to the GPU of the same local index there, which
// replicates it to the rest of its node over intra-node links (the
// same-index relay of section 3.2); inside a node every destination gets a
// direct write, so on a full mesh each link carries each block once (the
// three unicast writes of section 5.2's step 2).
//
// Why no paired relaying here: the whole communicator is every GPU of
// every node, so every direct link of a full-mesh node already carries one
// block each way; the relay pairing of section 3.1 only helps when the
// destinations are a domain that leaves cross-domain links idle (two TP=4
// groups on one 8-way mesh). That case is two concurrent allgathers over
// sub-groups, which no registered collective describes (a communicator is
// always the whole topology here): multiwrite_grouped.go plans it and
// sim/multiwrite_test.go measures it. Likewise section 2.3.1: on a switch
// (dgx-h100) every GPU's ingress must carry P-1 blocks whatever the
// scheme, so multicast gains nothing inside the node; its gain is on the
// rails, where every node receives each block once.
//
// Costs: each NIC port sends and receives (N-1) blocks (the minimum for a
// node's share of the data), each intra-node link l -> j carries the own
// block plus the N-1 blocks l relays, and the depth is two hops (rail, then
// NVLink), not the N-1 inter-node steps of a ring. Layout: dst holds block
// j at j*Bytes. Scratch: none, a relay forwards from its own dst (section
// 6.4: relays reuse the receive buffers).

func init() {
	registerWholePlan(Algorithm{
		Collective: coll.Allgather,
		Name:       "multiwrite",
		Desc:       "relay multicast: one copy per remote node over the same-index rail, replicated inside the node; direct writes in the node",
		Paper:      "MultiWrite sections 3.2, 4.3.3, 5.2 (MultiWrite same-index relay)",
	}, allgatherMultiwrite)
}

// allgatherMultiwrite builds every rank's program (only < 0) or rank
// only's: every rank's block is one message to all ranks.
func allgatherMultiwrite(spec *Spec, plan *Plan, only int) error {
	n := plan.NRanks
	B := spec.Bytes
	all := FullBitmap(n)
	msg := func(r int) (Multicast, Placement) {
		return Multicast{Src: r, Dests: all, Bytes: B}, Placement{From: At(BufSrc, 0), DstOff: int64(r) * B}
	}
	return lowerMulticastAlg("multiwrite", spec, plan, only, n, msg, Sizes{Src: B, Dst: int64(n) * B}, RelayOptions{})
}
