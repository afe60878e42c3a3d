//go:build ucc

package main

/*
#define GORING_TYPES_ONLY
#include "goring.h"
*/
import "C"

import (
	"math"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/team"
)

// goring.h's MoE entry: dispatch and combine, which UCC has no collective
// for, made here into a team.Coll that goring_coll_post, test and
// finalize drive as any other (their handles carry no C-path bit, so
// cpath.c hands them to Go). This file only reads C memory; team checks
// and runs the call (team/moe.go).

// maxSlots bounds a routing's slots (tokens x topk): the layout numbers
// them in int32, and the ids are 4 bytes each, read here before any
// check of their values.
const maxSlots = math.MaxInt32

// maxExperts bounds num_experts before a placement is read or made:
// thousands is a large model today; a garbage count must not allocate.
const maxExperts = 1 << 24

//export goring_moe_init
func goring_moe_init(h C.goring_team_h, args *C.goring_moe_args_t, out *C.goring_coll_h) (status C.goring_status_t) {
	defer guard(&status)
	team.CollectiveStarts() // the runtime kept awake while collectives come (team/awake.go)
	t, ok := lookup[*team.Team](uint64(h))
	if !ok || args == nil || out == nil {
		return fail(team.Invalid("goring_moe_init: unknown team %d or NULL argument", h))
	}
	m := team.MoEArgs{Src: args.src, Dst: args.dst, Mem: memArgOf(args.mem)}
	switch args.coll {
	case C.GORING_MOE_DISPATCH:
		m.Coll = coll.Dispatch
	case C.GORING_MOE_COMBINE:
		m.Coll = coll.Combine
		if m.Dtype, ok = dtypes[args.dtype]; !ok {
			return fail(team.NotSupported("goring_moe_init: combine datatype %d", args.dtype))
		}
	default:
		return fail(team.Invalid("goring_moe_init: collective %d: want GORING_MOE_DISPATCH or GORING_MOE_COMBINE", args.coll))
	}
	if args.alg != nil {
		m.Alg = C.GoString(args.alg)
	}
	var err error
	if m.Routing, err = routingOf(args, t.Size()); err != nil {
		return fail(err)
	}
	c, err := team.NewMoEColl(t, m)
	if err != nil {
		return fail(err)
	}
	*out = C.goring_coll_h(newHandle(c))
	return C.GORING_OK
}

//export goring_moe_layout
func goring_moe_layout(h C.goring_team_h, args *C.goring_moe_args_t, rows, expertRows, rowSlots *C.uint64_t, slotsCap C.size_t) (status C.goring_status_t) {
	defer guard(&status)
	t, ok := lookup[*team.Team](uint64(h))
	if !ok || args == nil || rows == nil {
		return fail(team.Invalid("goring_moe_layout: unknown team %d or NULL argument", h))
	}
	r, err := routingOf(args, t.Size())
	if err != nil {
		return fail(err)
	}
	l, err := t.MoELayout(r)
	if err != nil {
		return fail(err)
	}
	*rows = C.uint64_t(l.Rows)
	if expertRows != nil {
		out := unsafe.Slice((*uint64)(unsafe.Pointer(expertRows)), len(l.ExpertRows))
		for e, n := range l.ExpertRows {
			out[e] = uint64(n)
		}
	}
	if rowSlots != nil {
		if uint64(slotsCap) < uint64(l.Rows) {
			return fail(team.Invalid("goring_moe_layout: row_slots holds %d entries, the rank has %d rows", slotsCap, l.Rows))
		}
		out := unsafe.Slice((*uint64)(unsafe.Pointer(rowSlots)), len(l.Slots))
		for m, s := range l.Slots {
			out[m] = uint64(s)
		}
	}
	return C.GORING_OK
}

// routingOf copies the routing of args for a team of n out of C memory,
// after checking the sizes that say how much of it there is to read; team
// checks the values (team.CheckRouting).
func routingOf(args *C.goring_moe_args_t, n int) (*moe.Routing, error) {
	k, ne := uint64(args.topk), uint64(args.num_experts)
	switch {
	case args.tokens == nil:
		return nil, team.Invalid("moe: NULL tokens (want one count per rank, %d)", n)
	case k == 0:
		return nil, team.Invalid("moe: top-k 0: want 1..num_experts (%d)", ne)
	case ne > maxExperts:
		return nil, team.Invalid("moe: %d experts: goring plans for at most %d", ne, maxExperts)
	case ne < k:
		return nil, team.Invalid("moe: %d experts cannot serve top-%d (a token's experts are distinct)", ne, k)
	case uint64(args.token_bytes) > math.MaxInt64:
		return nil, team.Invalid("moe: token size %d bytes overflows", uint64(args.token_bytes))
	}
	r := &moe.Routing{TokenBytes: int64(args.token_bytes), TopK: int(k), Tokens: make([]int, n)}
	var slots uint64
	for q, x := range unsafe.Slice((*uint64)(unsafe.Pointer(args.tokens)), n) {
		if x > maxSlots || slots+x*k > maxSlots {
			return nil, team.Invalid("moe: rank %d owns %d tokens: the routing's slots (tokens x top-k) pass %d", q, x, maxSlots)
		}
		r.Tokens[q] = int(x)
		slots += x * k
	}
	if slots > 0 && args.expert_ids == nil {
		return nil, team.Invalid("moe: NULL expert_ids for %d slots", slots)
	}
	if slots > 0 {
		r.Experts = append([]int32(nil), unsafe.Slice((*int32)(unsafe.Pointer(args.expert_ids)), slots)...)
	}
	if args.placement == nil {
		r.Placement = moe.BlockPlacement(int(ne), n)
		return r, nil
	}
	r.Placement = make([]int, ne)
	for e, q := range unsafe.Slice((*uint32)(unsafe.Pointer(args.placement)), ne) {
		r.Placement[e] = int(q)
	}
	return r, nil
}
