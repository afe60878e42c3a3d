//go:build ucc

package main

/*
#cgo CFLAGS: -I${SRCDIR} -I${SRCDIR}/../cexec -I${SRCDIR}/../ucx
#include <stdint.h>
#define GORING_TYPES_ONLY
#include "goring.h"
int  tlg_cpath_register(uint64_t handle, void *team);
void tlg_cpath_unregister(uint64_t handle);
int  tlg_shared_register(uint64_t ctx, void *shared);
void tlg_shared_unregister(uint64_t ctx);
*/
import "C"

import (
	"github.com/goring-hpc/goring/cexec"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/team"
)

// The C path's C half (docs/ucc.md "Small collectives in C"): cpath.c
// keeps a table of the teams whose small host calls it runs without
// entering Go, by team handle. Package team decides which teams and
// shapes go there (team/cpath.go); this file lists a team in the table
// and keys a call as cpath.c does.

// cpathTable is cpath.c's table of teams, as team.CPathTable.
type cpathTable struct{}

func (cpathTable) Register(handle uint64, ct *cexec.Team) bool {
	return C.tlg_cpath_register(C.uint64_t(handle), ct.Ptr()) == 0
}

func (cpathTable) Unregister(handle uint64) { C.tlg_cpath_unregister(C.uint64_t(handle)) }

// cpathKey is the call's shape as cpath.c's tlg_cpath_key computes it
// from the same arguments (goring.h's numbers; op only for reductions,
// root only for bcast).
func cpathKey(args *C.goring_coll_args_t, a team.Args) cexec.Key {
	k := cexec.Key{Coll: uint8(args.coll), Dtype: uint8(args.dtype), InPlace: args.in_place != 0,
		Count: uint64(args.count), Alg: a.Alg}
	if a.Coll.Reduces() {
		k.Op = uint8(args.op)
	}
	if a.Coll == coll.Bcast {
		k.Root = uint32(args.root)
	}
	return k
}

// registerShared lists the context's shared worker (the context path,
// ctxpath.c) under its handle; where the table is full, that context's
// teams run their small calls on their own workers, and its card says it
// has no shared worker, so that its peers' teams do too.
func registerShared(h uint64, ctx *team.Context) error {
	if cs := ctx.SharedC(); cs != nil && C.tlg_shared_register(C.uint64_t(h), cs.Ptr()) != 0 {
		return ctx.DropShared()
	}
	return nil
}

// unregisterShared takes the context off the table before it closes.
func unregisterShared(h uint64) { C.tlg_shared_unregister(C.uint64_t(h)) }
