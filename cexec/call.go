package cexec

/*
#include <stdlib.h>
#include "cexec.h"
*/
import "C"

import (
	"errors"
	"unsafe"
)

// State is a C call's state (cexec.h's GX_*).
type State int

const (
	Done    State = C.GX_DONE
	Running State = C.GX_RUNNING
	// Watch: running, and due for a check of its peers by the caller
	// (the team layer asks its failure detector, then tests again).
	Watch  State = C.GX_WATCH
	Failed State = C.GX_FAILED
)

// Call is one C call, driven from Go: the team layer drives its calls
// from C (cshim), and tests drive them from here. Its buffers must be C
// memory (ucx.Alloc): UCX holds them after the cgo call returns. Like
// Team's methods, its methods leave locking to the caller (Team.Lock),
// except Finalize.
type Call struct{ c *C.gx_call_t }

// ErrNotCached is NewCall's answer for a shape the team has no program of.
var ErrNotCached = errors.New("cexec: no program cached for this call shape")

// NewCall takes a call of k's cached program.
func (t *Team) NewCall(k Key) (*Call, error) {
	ck, err := k.c()
	if err != nil {
		return nil, err
	}
	p := C.gx_team_get(t.t, &ck)
	if p == nil {
		return nil, ErrNotCached
	}
	c := C.gx_call_new(t.t, p)
	if c == nil {
		return nil, errors.New("cexec: out of memory for a call")
	}
	return &Call{c: c}, nil
}

// Post starts the call on src and dst (C memory, mapped by the program's
// Layout).
func (c *Call) Post(src, dst unsafe.Pointer) error {
	if C.gx_call_post(c.c, src, dst) != C.GX_DONE {
		return c.Err()
	}
	return nil
}

// Test progresses the call once and reports its state.
func (c *Call) Test() State { return State(C.gx_call_test(c.c)) }

// Fail cancels a running call (a peer found dead): it ends Failed.
func (c *Call) Fail() { C.gx_call_fail(c.c) }

// Err is the reason the call failed, or nil.
func (c *Call) Err() error {
	if c.c.status != C.GX_FAILED {
		return nil
	}
	var buf [256]C.char
	C.gx_call_error(c.c, &buf[0], C.size_t(len(buf)))
	return errors.New(C.GoString(&buf[0]))
}

// Seq is the sequence number the call's tags carry.
func (c *Call) Seq() uint32 { return uint32(c.c.seq) }

// Finalize gives the call back (cancelled if still running). The caller
// must not hold the team's lock: Finalize takes it, and the C side
// releases it.
func (c *Call) Finalize() {
	if c.c != nil {
		C.gx_team_lock(c.c.team)
		C.gx_call_finalize(c.c)
		c.c = nil
	}
}
