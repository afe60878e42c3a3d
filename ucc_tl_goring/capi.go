//go:build ucc

package main

/*
#cgo CFLAGS: -I${SRCDIR}
#include <stdlib.h>
#include <string.h>
#define GORING_TYPES_ONLY
#include "goring.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/team"
)

// The exported functions of goring.h. Each converts its arguments,
// calls the Go side and turns the outcome into a goring_status_t; guard
// recovers any panic so that none crosses into C. The collective calls
// are goring_go_coll_*: cpath.c defines goring_coll_*, which run a call
// whose shape is lowered into C without entering Go and hand every other
// call to these.

func guard(status *C.goring_status_t) {
	if r := recover(); r != nil {
		setLastError(fmt.Errorf("internal error (panic): %v\n%s", r, debug.Stack()))
		*status = C.GORING_ERR_INTERNAL
	}
}

func fail(err error) C.goring_status_t {
	setLastError(err)
	return C.goring_status_t(team.StatusOf(err))
}

//export goring_api_version
func goring_api_version() C.int { return C.GORING_API_VERSION }

//export goring_context_create
func goring_context_create(opts *C.char, out *C.goring_context_h) (status C.goring_status_t) {
	defer guard(&status)
	if out == nil {
		return fail(team.Invalid("goring_context_create: NULL output"))
	}
	s := ""
	if opts != nil {
		s = C.GoString(opts)
	}
	ctx, err := team.NewContext(s, cpathTable{})
	if err != nil {
		return fail(err)
	}
	h := newHandle(ctx)
	if err := registerShared(h, ctx); err != nil {
		dropHandle(h)
		_ = ctx.Close()
		return fail(err)
	}
	profileStart()
	*out = C.goring_context_h(h)
	return C.GORING_OK
}

//export goring_context_destroy
func goring_context_destroy(h C.goring_context_h) (status C.goring_status_t) {
	defer guard(&status)
	ctx, ok := lookup[*team.Context](uint64(h))
	if !ok {
		return fail(team.Invalid("goring_context_destroy: unknown context %d", h))
	}
	dropHandle(uint64(h))
	unregisterShared(uint64(h))
	defer profileStop()
	if err := ctx.Close(); err != nil {
		return fail(err)
	}
	return C.GORING_OK
}

//export goring_team_create
func goring_team_create(h C.goring_context_h, rank, size C.uint32_t, out *C.goring_team_h) (status C.goring_status_t) {
	defer guard(&status)
	ctx, ok := lookup[*team.Context](uint64(h))
	if !ok || out == nil {
		return fail(team.Invalid("goring_team_create: unknown context %d or NULL output", h))
	}
	t, err := team.NewTeam(ctx, int(rank), int(size))
	if err != nil {
		return fail(err)
	}
	*out = C.goring_team_h(teamHandle(t))
	return C.GORING_OK
}

// goring_context_card copies the context's card (rendezvous.go), what UCC
// publishes as goring's context address, into buf of capacity *length
// and sets *length to its size; buf NULL asks the size only.
//
//export goring_context_card
func goring_context_card(h C.goring_context_h, buf unsafe.Pointer, length *C.size_t) (status C.goring_status_t) {
	defer guard(&status)
	ctx, ok := lookup[*team.Context](uint64(h))
	if !ok || length == nil {
		return fail(team.Invalid("goring_context_card: unknown context %d or NULL length", h))
	}
	return copyOut("goring_context_card", ctx.Card(), buf, length)
}

// goring_team_create_lazy creates rank's share of a team of size whose
// members published the context cards cards[r] (bounds[r] bytes readable
// at each); key is the team's key, the same on every member and unique
// among the context's live teams. The team connects on its first call.
//
//export goring_team_create_lazy
func goring_team_create_lazy(h C.goring_context_h, rank, size C.uint32_t, key, gen C.uint32_t, cards *unsafe.Pointer, bounds *C.size_t, out *C.goring_team_h) (status C.goring_status_t) {
	defer guard(&status)
	ctx, ok := lookup[*team.Context](uint64(h))
	if !ok || out == nil || cards == nil || bounds == nil {
		return fail(team.Invalid("goring_team_create_lazy: unknown context %d or NULL argument", h))
	}
	cs, err := cardsOf(cards, bounds, int(size))
	if err != nil {
		return fail(err)
	}
	t, err := team.NewLazyTeam(ctx, int(rank), int(size), uint32(key), uint32(gen), cs)
	if err != nil {
		return fail(err)
	}
	*out = C.goring_team_h(teamHandle(t))
	return C.GORING_OK
}

//export goring_team_card
func goring_team_card(h C.goring_team_h, buf unsafe.Pointer, length *C.size_t) (status C.goring_status_t) {
	defer guard(&status)
	t, ok := lookup[*team.Team](uint64(h))
	if !ok || length == nil {
		return fail(team.Invalid("goring_team_card: unknown team %d or NULL length", h))
	}
	card, err := t.Card()
	if err != nil {
		return fail(fmt.Errorf("goring_team_card: team %d: %w", h, err))
	}
	return copyOut("goring_team_card", card, buf, length)
}

// copyOut copies b into buf of capacity *length (when buf is not NULL)
// and sets *length to len(b).
func copyOut(what string, b []byte, buf unsafe.Pointer, length *C.size_t) C.goring_status_t {
	capacity := int(*length)
	*length = C.size_t(len(b))
	if buf == nil {
		return C.GORING_OK
	}
	if capacity < len(b) {
		return fail(team.Invalid("%s: buffer of %d bytes, the card needs %d", what, capacity, len(b)))
	}
	copy(unsafe.Slice((*byte)(buf), capacity), b)
	return C.GORING_OK
}

//export goring_team_layers
func goring_team_layers(h C.goring_team_h, names *C.char) (status C.goring_status_t) {
	defer guard(&status)
	t, ok := lookup[*team.Team](uint64(h))
	if !ok || names == nil {
		return fail(team.Invalid("goring_team_layers: unknown team %d or NULL names", h))
	}
	t.SetLayers(strings.Split(C.GoString(names), ","))
	return C.GORING_OK
}

//export goring_team_scores
func goring_team_scores(h C.goring_team_h, buf *C.char, length *C.size_t, summary *C.char, summaryLen *C.size_t) (status C.goring_status_t) {
	defer guard(&status)
	t, ok := lookup[*team.Team](uint64(h))
	if !ok || length == nil || summaryLen == nil {
		return fail(team.Invalid("goring_team_scores: unknown team %d or NULL length", h))
	}
	str, line, err := t.Scores()
	declined := errors.Is(err, team.ErrDeclined)
	if err != nil && !declined {
		return fail(fmt.Errorf("goring_team_scores: team %d: %w", h, err))
	}
	if err := cString("goring_team_scores", str, buf, length); err != nil {
		return fail(err)
	}
	if err := cString("goring_team_scores summary", line, summary, summaryLen); err != nil {
		return fail(err)
	}
	if declined {
		return C.GORING_ERR_DECLINED // a verdict, not an error: goring_last_error keeps the last one
	}
	return C.GORING_OK
}

// cString copies s and a NUL into buf of capacity *length (when buf is
// not NULL) and sets *length to the bytes needed.
func cString(what, s string, buf *C.char, length *C.size_t) error {
	capacity := int(min(uint64(*length), uint64(len(s))+1)) // any size_t, SIZE_MAX included
	*length = C.size_t(len(s) + 1)
	if buf == nil {
		return nil
	}
	if capacity < len(s)+1 {
		return team.Invalid("%s: buffer of %d bytes, the string needs %d", what, capacity, len(s)+1)
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(buf)), capacity)
	copy(dst, s)
	dst[len(s)] = 0
	return nil
}

//export goring_team_connect
func goring_team_connect(h C.goring_team_h, cards unsafe.Pointer, slot C.size_t) (status C.goring_status_t) {
	defer guard(&status)
	t, ok := lookup[*team.Team](uint64(h))
	if !ok || cards == nil {
		return fail(team.Invalid("goring_team_connect: unknown team %d or NULL cards", h))
	}
	n := int(slot) * t.Size()
	if err := t.Connect(unsafe.Slice((*byte)(cards), n), int(slot)); err != nil {
		return fail(err)
	}
	return C.GORING_OK
}

//export goring_team_destroy
func goring_team_destroy(h C.goring_team_h) (status C.goring_status_t) {
	defer guard(&status)
	t, ok := lookup[*team.Team](uint64(h))
	if !ok {
		return fail(team.Invalid("goring_team_destroy: unknown team %d", h))
	}
	dropHandle(uint64(h))
	if err := t.Destroy(); err != nil {
		return fail(err)
	}
	return C.GORING_OK
}

// collTypes, dtypes and ops map goring.h's enums onto package coll.
var (
	collTypes = map[C.goring_coll_type_t]coll.Collective{
		C.GORING_COLL_ALLGATHER: coll.Allgather, C.GORING_COLL_ALLREDUCE: coll.Allreduce,
		C.GORING_COLL_REDUCE_SCATTER: coll.ReduceScatter, C.GORING_COLL_BCAST: coll.Bcast,
		C.GORING_COLL_ALLTOALL: coll.Alltoallv, C.GORING_COLL_ALLTOALLV: coll.Alltoallv, // alltoall: uniform counts
	}
	dtypes = map[C.goring_dtype_t]coll.Dtype{
		C.GORING_DT_INT8: coll.Int8, C.GORING_DT_INT16: coll.Int16, C.GORING_DT_INT32: coll.Int32, C.GORING_DT_INT64: coll.Int64,
		C.GORING_DT_UINT8: coll.Uint8, C.GORING_DT_UINT16: coll.Uint16, C.GORING_DT_UINT32: coll.Uint32, C.GORING_DT_UINT64: coll.Uint64,
		C.GORING_DT_FLOAT16: coll.Float16, C.GORING_DT_BFLOAT16: coll.Bfloat16, C.GORING_DT_FLOAT32: coll.Float32, C.GORING_DT_FLOAT64: coll.Float64,
	}
	ops = map[C.goring_op_t]coll.Op{
		C.GORING_OP_SUM: coll.Sum, C.GORING_OP_PROD: coll.Prod, C.GORING_OP_MIN: coll.Min, C.GORING_OP_MAX: coll.Max,
		C.GORING_OP_LAND: coll.Land, C.GORING_OP_LOR: coll.Lor, C.GORING_OP_BAND: coll.Band, C.GORING_OP_BOR: coll.Bor, C.GORING_OP_BXOR: coll.Bxor,
	}
)

//export goring_go_coll_init
func goring_go_coll_init(h C.goring_team_h, args *C.goring_coll_args_t, out *C.goring_coll_h) (status C.goring_status_t) {
	defer guard(&status)
	team.CollectiveStarts() // the runtime kept awake while collectives come (team/awake.go)
	t, ok := lookup[*team.Team](uint64(h))
	if !ok || args == nil || out == nil {
		return fail(team.Invalid("goring_coll_init: unknown team %d or NULL argument", h))
	}
	a, err := argsOf(args, t.Size())
	if err != nil {
		return fail(err)
	}
	cl, err := team.NewColl(t, a)
	if err != nil {
		return fail(err)
	}
	t.OfferCPath(cpathKey(args, a), cl, a)
	*out = C.goring_coll_h(newHandle(cl))
	return C.GORING_OK
}

// argsOf is a call's arguments in Go terms, for a team of size ranks.
func argsOf(args *C.goring_coll_args_t, size int) (team.Args, error) {
	c, ok := collTypes[args.coll]
	if !ok {
		return team.Args{}, team.NotSupported("collective type %d", args.coll)
	}
	d, ok := dtypes[args.dtype]
	if !ok {
		return team.Args{}, team.NotSupported("datatype %d", args.dtype)
	}
	a := team.Args{Coll: c, Src: args.src, Dst: args.dst, Count: uint64(args.count), Dtype: d, Root: int(args.root),
		InPlace: args.in_place != 0, Mem: memArgOf(args.mem)}
	if c.Reduces() {
		if a.Op, ok = ops[args.op]; !ok {
			return team.Args{}, team.NotSupported("reduction op %d", args.op)
		}
	}
	if args.alg != nil {
		a.Alg = C.GoString(args.alg)
	}
	var err error
	switch args.coll {
	case C.GORING_COLL_ALLTOALL:
		a.A2A = team.UniformA2A(uint64(args.count), size)
	case C.GORING_COLL_ALLTOALLV:
		a.A2A, err = a2aOf(args, size)
	}
	return a, err
}

// goring_go_cteam_lower is the context path's planner (ctxpath.c): the
// program of a call on the team h, whose members are the context ranks
// ranks[], lowered into C (*prog; NULL where the team runs the call
// itself), with the members' endpoints on the shared worker connected.
//
//export goring_go_cteam_lower
func goring_go_cteam_lower(h C.goring_team_h, args *C.goring_coll_args_t, ranks *C.uint32_t, prog *unsafe.Pointer) (status C.goring_status_t) {
	defer guard(&status)
	t, ok := lookup[*team.Team](uint64(h))
	if !ok || args == nil || ranks == nil || prog == nil {
		return fail(team.Invalid("goring_cteam_coll_init: unknown team %d or NULL argument", h))
	}
	*prog = nil
	a, err := argsOf(args, t.Size())
	if err != nil {
		return C.GORING_OK // the team's own call says why
	}
	rs := unsafe.Slice((*uint32)(unsafe.Pointer(ranks)), t.Size())
	p, err := t.SharedProgram(a, rs)
	if err != nil {
		return fail(err)
	}
	if p != nil {
		*prog = p.Take()
	}
	return C.GORING_OK
}

// cardsOf views the members' context cards C holds (cards[r], bounds[r]
// bytes readable there) as Go slices of that memory.
func cardsOf(cards *unsafe.Pointer, bounds *C.size_t, size int) ([][]byte, error) {
	if cards == nil || bounds == nil {
		return nil, team.Invalid("NULL cards")
	}
	ptrs := unsafe.Slice(cards, size)
	lens := unsafe.Slice(bounds, size)
	cs := make([][]byte, size)
	for r := range cs {
		if ptrs[r] == nil {
			return nil, team.NotSupported("rank %d has no goring context", r)
		}
		cs[r] = unsafe.Slice((*byte)(ptrs[r]), int(lens[r]))
	}
	return cs, nil
}

// goring_go_cards_check is the failure detector of a context-path call
// whose team has no Go side: the members' processes on this host, from
// their context cards. GORING_OK: keep waiting.
//
//export goring_go_cards_check
func goring_go_cards_check(rank, size C.uint32_t, cards *unsafe.Pointer, bounds *C.size_t) (status C.goring_status_t) {
	defer guard(&status)
	cs, err := cardsOf(cards, bounds, int(size))
	if err != nil {
		return fail(err)
	}
	if err := team.CheckCards(int(rank), cs); err != nil {
		return fail(err)
	}
	return C.GORING_OK
}

// goring_go_set_error records the reason of a failed C-path call (cpath.c)
// as this process's last error and returns status.
//
//export goring_go_set_error
func goring_go_set_error(text *C.char, status C.goring_status_t) C.goring_status_t {
	setLastError(errors.New(C.GoString(text)))
	return status
}

// goring_go_team_check is the C path's failure detector: a C call that
// has waited half a second asks whether a peer has failed (UCX's endpoint
// errors, the processes of the peers on this host). GORING_OK: keep
// waiting, as MPI lets a rank be late.
//
//export goring_go_team_check
func goring_go_team_check(h C.goring_team_h) (status C.goring_status_t) {
	defer guard(&status)
	t, ok := lookup[*team.Team](uint64(h))
	if !ok {
		return fail(team.Invalid("goring_coll_test: unknown team %d", h))
	}
	if err := t.CheckPeers(); err != nil {
		return fail(err)
	}
	return C.GORING_OK
}

//export goring_go_coll_post
func goring_go_coll_post(h C.goring_coll_h) (status C.goring_status_t) {
	defer guard(&status)
	c, ok := lookup[*team.Coll](uint64(h))
	if !ok {
		return fail(team.Invalid("goring_coll_post: unknown collective %d", h))
	}
	if err := c.Post(); err != nil {
		return fail(err)
	}
	return C.GORING_OK
}

//export goring_go_coll_post_stream
func goring_go_coll_post_stream(h C.goring_coll_h, stream unsafe.Pointer) (status C.goring_status_t) {
	defer guard(&status)
	c, ok := lookup[*team.Coll](uint64(h))
	if !ok {
		return fail(team.Invalid("goring_coll_post_stream: unknown collective %d", h))
	}
	// A CUstream is a handle for the driver, never Go memory.
	if err := c.PostOn(uintptr(stream)); err != nil {
		return fail(err)
	}
	return C.GORING_OK
}

//export goring_go_coll_prepare_stream
func goring_go_coll_prepare_stream(h C.goring_coll_h) (status C.goring_status_t) {
	defer guard(&status)
	c, ok := lookup[*team.Coll](uint64(h))
	if !ok {
		return fail(team.Invalid("goring_coll_prepare_stream: unknown collective %d", h))
	}
	ready, err := c.PrepareStream()
	switch {
	case err != nil:
		return fail(err)
	case !ready:
		return fail(team.NotSupported("goring_coll_prepare_stream: the call does not go on a caller's stream"))
	}
	return C.GORING_OK
}

//export goring_go_coll_test
func goring_go_coll_test(h C.goring_coll_h) (status C.goring_status_t) {
	defer guard(&status)
	c, ok := lookup[*team.Coll](uint64(h))
	if !ok {
		return fail(team.Invalid("goring_coll_test: unknown collective %d", h))
	}
	done, err := c.Test()
	switch {
	case err != nil:
		return fail(err)
	case done:
		return C.GORING_OK
	}
	return C.GORING_INPROGRESS
}

//export goring_go_coll_finalize
func goring_go_coll_finalize(h C.goring_coll_h) (status C.goring_status_t) {
	defer guard(&status)
	c, ok := lookup[*team.Coll](uint64(h))
	if !ok {
		return fail(team.Invalid("goring_coll_finalize: unknown collective %d", h))
	}
	dropHandle(uint64(h))
	c.Finalize()
	return C.GORING_OK
}

// algNames holds one C copy of each algorithm name ever returned, so the
// strings goring_coll_algorithm hands out stay valid and are made once.
var algNames struct {
	sync.Mutex
	m map[string]*C.char
}

//export goring_go_coll_algorithm
func goring_go_coll_algorithm(h C.goring_coll_h) (name *C.char) {
	defer func() {
		if recover() != nil {
			name = nil
		}
	}()
	alg := ""
	if c, ok := lookup[*team.Coll](uint64(h)); ok {
		alg = c.Algorithm()
	}
	algNames.Lock()
	defer algNames.Unlock()
	if algNames.m == nil {
		algNames.m = map[string]*C.char{}
	}
	if s, ok := algNames.m[alg]; ok {
		return s
	}
	s := C.CString(alg)
	algNames.m[alg] = s
	return s
}

//export goring_last_error
func goring_last_error(buf *C.char, length C.size_t) C.size_t {
	text := getLastError()
	if buf != nil && length > 0 {
		// Only the bytes the text needs are touched: length may be any
		// size_t (SIZE_MAX for "large enough"), beyond what an int holds.
		room := int(min(uint64(length), uint64(len(text))+1))
		dst := unsafe.Slice((*byte)(unsafe.Pointer(buf)), room)
		copy(dst, text[:room-1])
		dst[room-1] = 0
	}
	return C.size_t(len(text))
}

// a2aOf copies alltoallv's arrays (n entries each; displacements may be
// NULL) out of C memory.
func a2aOf(args *C.goring_coll_args_t, n int) (*team.A2AArgs, error) {
	if args.src_counts == nil || args.dst_counts == nil {
		return nil, team.Invalid("alltoallv: NULL counts")
	}
	arr := func(p *C.uint64_t) []uint64 {
		if p == nil {
			return nil
		}
		return append([]uint64(nil), unsafe.Slice((*uint64)(unsafe.Pointer(p)), n)...)
	}
	return &team.A2AArgs{SendCounts: arr(args.src_counts), RecvCounts: arr(args.dst_counts),
		SendDispls: arr(args.src_displs), RecvDispls: arr(args.dst_displs)}, nil
}

func memArgOf(m C.goring_mem_type_t) team.MemArg {
	switch m {
	case C.GORING_MEM_HOST:
		return team.MemHost
	case C.GORING_MEM_CUDA:
		return team.MemCUDA
	}
	return team.MemUnknown
}
