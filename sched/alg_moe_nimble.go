package sched

import (
	"fmt"
	"slices"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/nimble"
)

// MoE dispatch and combine "nimble": NIMBLE section V-D runs its
// multi-path planner on the token traffic of expert parallelism. The
// demand matrix is unicast's (one row per token and destination rank,
// moe.Layout.PairRows × token bytes); nimble.PlanMWU splits every demand
// of at least the split threshold (1 MiB, section V-B) over the direct
// path, 2-hop paths through another GPU of the node and rail-matched
// paths between nodes (section IV-B), in whole tokens. The first rows of
// a pair take the first path, the next rows the next, and so on; each
// path is a chain of legs whose relays only forward, so a hot expert's
// rank receives its rows over every link that reaches it instead of its
// one default path. Combine sends the rows back along chains reversed,
// planned on the transposed demand: a path's links depend on who sends
// (a rank's transfers to another node leave on its own rail), so the
// reverse of dispatch's split would put a hot expert's rank's whole
// reply on its one rail; planned in combine's direction, part of it goes
// through a peer of its node onto that peer's rail.

func init() {
	registerMoE("nimble",
		"NIMBLE: the unicast demands split over 2-hop and rail-matched paths by multiplicative weights",
		"NIMBLE section V-D (MoE dispatch/combine) on the planner of section IV-B",
		func(spec *Spec, lay *moe.Layout) ([]moeLeg, error) {
			legs, _, err := nimbleMoELegs(spec, lay, nimble.MWUOptions{})
			return legs, err
		})
}

// MoEDemand is the byte matrix of unicast dispatch (demand[s][d]: bytes
// rank s's tokens send rank d, one row per token and rank; zero diagonal):
// what the nimble planner balances.
func MoEDemand(lay *moe.Layout) [][]int64 {
	rows := lay.PairRows()
	for s := range rows {
		for d := range rows[s] {
			rows[s][d] *= lay.R.TokenBytes
		}
		rows[s][s] = 0
	}
	return rows
}

// GenerateMoENimble builds a dispatch or combine plan with algorithm
// nimble and explicit planner options (a lower split threshold, say), and
// returns the planner's answer with it.
func GenerateMoENimble(spec Spec, o nimble.MWUOptions) (*Plan, *nimble.MWUPlan, error) {
	if !spec.Collective.Routed() {
		return nil, nil, fmt.Errorf("GenerateMoENimble: %s is not dispatch or combine", spec.Collective)
	}
	spec.Algorithm = "nimble"
	if err := validateSpec(&spec); err != nil {
		return nil, nil, err
	}
	var mw *nimble.MWUPlan
	plan, err := generateMoE(&spec, func(spec *Spec, lay *moe.Layout) ([]moeLeg, error) {
		legs, p, err := nimbleMoELegs(spec, lay, o)
		mw = p
		return legs, err
	})
	return plan, mw, err
}

func nimbleMoELegs(spec *Spec, lay *moe.Layout, o nimble.MWUOptions) ([]moeLeg, *nimble.MWUPlan, error) {
	H := lay.R.TokenBytes
	o.ElemBytes = int(H)
	demand := MoEDemand(lay)
	combine := spec.Collective == coll.Combine
	if combine {
		demand = transpose(demand)
	}
	mw, err := nimble.PlanMWU(spec.Topo, demand, o)
	if err != nil {
		// The demand is valid by now: the topology is what the planner
		// cannot route (a NIC that reaches only its own GPU, say).
		return nil, nil, Unsupported("nimble", "%v", err)
	}
	n := spec.NRanks()
	var legs []moeLeg
	per := make([][]int32, n)
	for s := 0; s < n; s++ {
		per = tokensTo(lay, s, per)
		for d, toks := range per {
			if len(toks) == 0 {
				continue
			}
			dm := mw.Demand(s, d)
			if combine {
				dm = mw.Demand(d, s)
			}
			start := 0
			for p, path := range dm.Paths {
				k := int(dm.SplitBytes[p] / H)
				if k == 0 {
					continue
				}
				part := toks[start : start+k]
				start += k
				ranks := path.Ranks
				if combine {
					// Legs run from the token's owner; combine walks
					// them backwards, along the path planned for it.
					ranks = slices.Clone(ranks)
					slices.Reverse(ranks)
				}
				parent := -1
				for h := 0; h+1 < len(ranks); h++ {
					last := h+2 == len(ranks)
					legs = append(legs, moeLeg{From: ranks[h], To: ranks[h+1], Parent: parent,
						Tokens: append([]int32(nil), part...), Deliver: last})
					parent = len(legs) - 1
				}
			}
		}
	}
	return legs, mw, nil
}

// generateMoE builds every rank's program of a validated dispatch or
// combine spec from build's legs.
func generateMoE(spec *Spec, build moeLegs) (*Plan, error) {
	mp, err := newMoEPlan(spec, build)
	if err != nil {
		return nil, err
	}
	plan := newPlan(spec, spec.Algorithm)
	for r := range plan.Ranks {
		if spec.Collective == coll.Dispatch {
			mp.emitDispatch(spec, &plan.Ranks[r])
		} else {
			mp.emitCombine(spec, &plan.Ranks[r])
		}
	}
	return plan, nil
}

// transpose is m's transpose (m square): combine's demand from dispatch's.
func transpose(m [][]int64) [][]int64 {
	t := make([][]int64, len(m))
	for i := range t {
		t[i] = make([]int64, len(m))
		for j := range m {
			t[i][j] = m[j][i]
		}
	}
	return t
}
