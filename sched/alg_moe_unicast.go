package sched

import "github.com/goring-hpc/goring/moe"

// MoE dispatch and combine "unicast", the baseline of MultiWrite section
// 6.3 and NIMBLE section V-D: one copy of a token row per destination
// rank, straight from its owner (an all-to-all-v whose counts are
// moe.Layout.PairRows), however many of the token's experts that rank
// holds; the rank copies it into each of their groups. Combine is the
// reverse: each rank sums its experts' rows of a token and sends one row
// back.

func init() {
	registerMoE("unicast",
		"one copy per (token, destination rank) from the owner, as an all-to-all-v",
		"MultiWrite section 6.3 and NIMBLE section V-D baseline (all-to-all-v dispatch)",
		unicastLegs)
}

func unicastLegs(spec *Spec, lay *moe.Layout) ([]moeLeg, error) {
	n := spec.NRanks()
	var legs []moeLeg
	per := make([][]int32, n)
	for s := 0; s < n; s++ {
		per = tokensTo(lay, s, per)
		for d, toks := range per {
			if len(toks) > 0 {
				legs = append(legs, moeLeg{From: s, To: d, Parent: -1, Tokens: append([]int32(nil), toks...), Deliver: true})
			}
		}
	}
	return legs, nil
}
