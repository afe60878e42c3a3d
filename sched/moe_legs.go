package sched

import (
	"slices"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
)

// MoE dispatch and combine as legs. Every dispatch algorithm (unicast,
// multiwrite, nimble) is a set of legs: one message of token rows from one
// rank to another, either from the tokens' owner (its src) or forwarded
// from a leg the sender received. A leg that delivers hands its rows to
// the experts of its receiver (a copy into each expert group the token
// picked there); relays that do not deliver only hold and forward. The
// algorithms differ only in their legs; moe_emit.go turns legs into a
// rank's dispatch program, and the same legs reversed into its combine
// program (each leg carries back the sum of its subtree), so the two are
// inverse by construction.

// moeLeg is one message of token rows between two ranks.
type moeLeg struct {
	From, To int
	// Parent is the leg whose rows From forwards; -1 when From owns them.
	Parent int
	// Tokens are global token ids, ascending: the message's rows in order.
	Tokens []int32
	// Deliver: To copies the rows to its experts' groups (each token once
	// per expert of To it picked). Relay legs of nimble do not deliver.
	Deliver bool
}

// moeLegs builds an algorithm's legs for a routing.
type moeLegs func(spec *Spec, lay *moe.Layout) ([]moeLeg, error)

// moePlan is a routing's legs with the indexes emission needs.
type moePlan struct {
	lay  *moe.Layout
	legs []moeLeg
	// kids[l]: legs whose Parent is l, in leg order.
	kids [][]int
	// from[q], to[q]: legs sent and received by rank q, in leg order.
	from, to [][]int
	kmax     int // pieces per leg at most (tags are leg*kmax + piece)
}

func newMoEPlan(spec *Spec, build moeLegs) (*moePlan, error) {
	lay, err := moe.NewLayout(spec.Routing)
	if err != nil {
		return nil, err
	}
	legs, err := build(spec, lay)
	if err != nil {
		return nil, err
	}
	n := spec.NRanks()
	mp := &moePlan{lay: lay, legs: legs, kids: make([][]int, len(legs)), from: make([][]int, n), to: make([][]int, n), kmax: max(spec.Chunks, 1)}
	for l, g := range legs {
		if g.Parent >= 0 {
			mp.kids[g.Parent] = append(mp.kids[g.Parent], l)
		}
		mp.from[g.From] = append(mp.from[g.From], l)
		mp.to[g.To] = append(mp.to[g.To], l)
	}
	return mp, nil
}

// pieces is how many messages leg l's rows travel in: Spec.Chunks, at
// most one per row, at least one.
func (mp *moePlan) pieces(l int) int {
	return max(1, min(mp.kmax, len(mp.legs[l].Tokens)))
}

// piece returns the rows [a, b) of piece c of leg l.
func (mp *moePlan) piece(l, c int) (int, int) {
	n, k := len(mp.legs[l].Tokens), mp.pieces(l)
	return n * c / k, n * (c + 1) / k
}

func (mp *moePlan) tag(l, c int) int { return l*mp.kmax + c }

// index is the row of token g in leg l (g must be one of its tokens).
func (mp *moePlan) index(l int, g int32) int {
	i, _ := slices.BinarySearch(mp.legs[l].Tokens, g)
	return i
}

// registerMoE registers one algorithm for both dispatch and combine.
func registerMoE(name, desc, paper string, build moeLegs) {
	for _, c := range []coll.Collective{coll.Dispatch, coll.Combine} {
		c := c
		registerWholePlan(Algorithm{Collective: c, Name: name, Desc: desc, Paper: paper},
			func(spec *Spec, plan *Plan, only int) error {
				mp, err := newMoEPlan(spec, build)
				if err != nil {
					return err
				}
				for r := range plan.Ranks {
					if only >= 0 && r != only {
						continue
					}
					if c == coll.Dispatch {
						mp.emitDispatch(spec, &plan.Ranks[r])
					} else {
						mp.emitCombine(spec, &plan.Ranks[r])
					}
				}
				return nil
			})
	}
}

// tokensTo collects, for each destination rank, the tokens of rank s that
// go there (s itself excluded), ascending.
func tokensTo(lay *moe.Layout, s int, out [][]int32) [][]int32 {
	for q := range out {
		out[q] = out[q][:0]
	}
	var d []int
	for g := lay.Base[s]; g < lay.Base[s+1]; g++ {
		d = lay.Dests(g, d[:0])
		for _, q := range d {
			if q != s {
				out[q] = append(out[q], int32(g))
			}
		}
	}
	return out
}
