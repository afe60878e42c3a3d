package sched

import (
	"fmt"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// Grouped allgather: the TP-domain case of MultiWrite (section 3.1, Fig. 2,
// and the AllGather experiment of sections 5.2 and 6.2). The ranks of one
// full-mesh node form several groups (two TP=4 domains of an 8-way mesh)
// and every group runs its own allgather at the same time. Within a group
// only the group's direct links are used; the links between the groups lie
// idle, and paired relaying puts them to work: rank groups[0][i] and
// groups[1][i] are partners, and each relays part of its partner's block to
// the partner's group.
//
// This is not a registered collective: a goring communicator is the whole
// topology, and several concurrent allgathers over sub-groups are not one
// allgather over all ranks (their dst holds the group's blocks only), so
// Verify's allgather content rule does not apply; VerifyMulticast checks
// these plans against their messages instead. The plan is a plain Plan, so
// the simulator runs it like any other.

// GroupedMode picks how the grouped allgather uses the mesh.
type GroupedMode int

// Modes of the TP-domain comparison of MultiWrite sections 3.1 and 6.2.
const (
	// GroupedDirect: direct writes inside the group only (the HCCL
	// baseline: latency S/b).
	GroupedDirect GroupedMode = iota
	// GroupedUnicastMultipath: part of each block goes through the partner,
	// one copy per destination on the cross link (latency 3S/4b for TP=4).
	GroupedUnicastMultipath
	// GroupedMultiWrite: paired relaying with one copy on the cross link
	// (MultiWrite: latency S/2b for TP=4).
	GroupedMultiWrite
)

func (m GroupedMode) String() string {
	switch m {
	case GroupedDirect:
		return "grouped_direct"
	case GroupedUnicastMultipath:
		return "grouped_unicast_multipath"
	case GroupedMultiWrite:
		return "grouped_multiwrite"
	}
	return fmt.Sprintf("grouped_mode(%d)", int(m))
}

// GroupedAllgather plans one allgather of bytes per rank inside each of
// groups over t (group k's rank groups[k][i] puts its block at i*bytes of
// its dst; ranks in no group have empty buffers). The relaying modes need
// exactly two groups of equal size on one node: groups[0][i] and
// groups[1][i] are partners. It returns the plan and the messages and
// placements VerifyMulticast needs.
func GroupedAllgather(t *topo.Topology, groups [][]int, bytes int64, elem, chunks int, mode GroupedMode) (*Plan, []Multicast, []Placement, error) {
	if t == nil {
		return nil, nil, nil, fmt.Errorf("grouped allgather: no topology")
	}
	n := t.NumGPUs()
	if elem <= 0 || bytes <= 0 || bytes%int64(elem) != 0 {
		return nil, nil, nil, fmt.Errorf("grouped allgather: %d bytes is not a positive whole number of %d-byte elements", bytes, elem)
	}
	seen := make([]bool, n)
	for k, g := range groups {
		for _, r := range g {
			if r < 0 || r >= n || seen[r] {
				return nil, nil, nil, fmt.Errorf("grouped allgather: group %d: rank %d out of range 0..%d or in two groups", k, r, n-1)
			}
			seen[r] = true
		}
	}
	opt := RelayOptions{Unicast: mode == GroupedUnicastMultipath}
	if mode != GroupedDirect {
		if len(groups) != 2 || len(groups[0]) != len(groups[1]) {
			return nil, nil, nil, fmt.Errorf("grouped allgather: paired relaying needs two groups of equal size, have %d", len(groups))
		}
		opt.Partner = make([]int, n)
		for r := range opt.Partner {
			opt.Partner[r] = -1
		}
		for i := range groups[0] {
			a, b := groups[0][i], groups[1][i]
			opt.Partner[a], opt.Partner[b] = b, a
		}
	}
	spec := &Spec{Collective: coll.Allgather, Topo: t, Bytes: bytes, DtypeBytes: elem, Chunks: chunks}
	plan := newPlan(spec, mode.String())
	plan.Note = fmt.Sprintf("grouped allgather over %d groups (MultiWrite section 3.1): check with VerifyMulticast, not Verify", len(groups))
	var msgs []Multicast
	var place []Placement
	for _, g := range groups {
		dests := BitmapOf(n, g...)
		for i, r := range g {
			plan.Ranks[r].Sizes = Sizes{Src: bytes, Dst: int64(len(g)) * bytes}
			msgs = append(msgs, Multicast{Src: r, Dests: dests, Bytes: bytes})
			place = append(place, Placement{From: At(BufSrc, 0), DstOff: int64(i) * bytes})
		}
	}
	trees, err := PlanMulticast(t, msgs, elem, opt)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("grouped allgather: %w", err)
	}
	if err := LowerMulticast(plan, msgs, trees, place, elem, chunks); err != nil {
		return nil, nil, nil, err
	}
	return plan, msgs, place, nil
}
