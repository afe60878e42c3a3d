package sched

import (
	"github.com/goring-hpc/goring/moe"
)

// MoE dispatch and combine "multiwrite": MultiWrite section 3.2's
// same-index relay, as section 6.3 applies it to expert-parallel
// dispatch. A token crosses to each remote node that holds any of its
// experts once, to the GPU of the owner's local index there, with that
// node's part of its destination bitmap; that GPU keeps the row if it
// holds one of the token's experts and writes it to the other
// destinations of its node. Inside the owner's node, each destination
// gets a direct copy. A node's rail port thus carries a token once per
// remote node instead of once per remote destination rank. Combine runs
// the same tree backwards: the relay sums its node's rows of the token
// (its own experts' first) and sends one row across.
//
// It needs nodes with equal GPU counts (the same-index GPU must exist).

func init() {
	registerMoE("multiwrite",
		"one copy per remote node to the same-index GPU, which writes the node's destinations (relay by destination bitmap)",
		"MultiWrite section 3.2 (same-index relay) and 6.3 (MoE dispatch)",
		multiwriteLegs)
}

func multiwriteLegs(spec *Spec, lay *moe.Layout) ([]moeLeg, error) {
	t := spec.Topo
	g := len(t.Nodes[0].GPUs)
	for _, nd := range t.Nodes {
		if len(nd.GPUs) != g {
			return nil, Unsupported("multiwrite", "nodes of unequal GPU counts (%d and %d): no same-index relay", g, len(nd.GPUs))
		}
	}
	n := spec.NRanks()
	nodes := len(t.Nodes)
	var legs []moeLeg
	per := make([][]int32, n)
	var dests []int
	toNode := make([][]int32, nodes)
	for s := 0; s < n; s++ {
		a, loc := s/g, s%g
		per = tokensTo(lay, s, per)
		for b := range toNode {
			toNode[b] = toNode[b][:0]
		}
		for tok := lay.Base[s]; tok < lay.Base[s+1]; tok++ {
			dests = lay.Dests(tok, dests[:0])
			last := -1
			for _, q := range dests { // ascending, so nodes come in order
				if b := q / g; b != a && b != last {
					toNode[b] = append(toNode[b], int32(tok))
					last = b
				}
			}
		}
		for d := a * g; d < (a+1)*g; d++ {
			if d != s && len(per[d]) > 0 {
				legs = append(legs, moeLeg{From: s, To: d, Parent: -1, Tokens: append([]int32(nil), per[d]...), Deliver: true})
			}
		}
		for b := 0; b < nodes; b++ {
			if b == a || len(toNode[b]) == 0 {
				continue
			}
			relay := b*g + loc
			up := len(legs)
			legs = append(legs, moeLeg{From: s, To: relay, Parent: -1, Tokens: append([]int32(nil), toNode[b]...), Deliver: true})
			for d := b * g; d < (b+1)*g; d++ {
				if d != relay && len(per[d]) > 0 {
					legs = append(legs, moeLeg{From: relay, To: d, Parent: up, Tokens: append([]int32(nil), per[d]...), Deliver: true})
				}
			}
		}
	}
	return legs, nil
}
