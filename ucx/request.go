package ucx

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Completion describes a finished send or receive.
type Completion struct {
	// Err is nil on success, else a Status (errors.Is(c.Err, ErrCanceled),
	// ErrMessageTruncated, or a peer failure; see IsPeerFailure).
	Err error
	// Length is the number of bytes received, or sent.
	Length int
	// Tag is the tag of the message a receive matched, or the tag sent.
	Tag Tag
}

// Callback is called once per operation, on the goroutine that runs the
// worker's Progress or Wait, after the operation's buffer is released by
// UCX. It may post new operations and cancel others; it must not call
// Progress, Wait or Close of the same worker (those calls return at once
// without delivering anything when made from a callback).
type Callback func(Completion)

// Request is one posted send or receive. UCX's request object is freed by
// the package when the completion is delivered; the Go value stays valid
// and keeps the result.
type Request struct {
	w    *Worker
	ptr  unsafe.Pointer // UCX request (C memory); nil once delivered or if it finished at once
	h    uint64         // carried by C as user data: the worker's slot (Worker.slots) + 1
	cb   Callback
	pin  *runtime.Pinner // pins a Go-heap buffer while UCX uses it (the worker's, reused); nil: none
	imm  Status          // status of an operation that finished when posted
	done bool
	c    Completion
}

// Done reports whether the completion has been delivered (by Progress or
// Wait).
func (r *Request) Done() bool { return r.done }

// Completion is the result; meaningful once Done.
func (r *Request) Completion() Completion { return r.c }

// Err is the result's error; nil while not Done.
func (r *Request) Err() error { return r.c.Err }

// Test asks UCX whether the operation has finished, without progressing
// the worker: done is true once UCX has finished it, even if its callback
// has not run yet (it runs on the next Progress or Wait).
func (r *Request) Test() (done bool, err error) {
	if r.done {
		return true, r.c.Err
	}
	if r.ptr == nil { // finished when posted; the completion is queued
		return true, statusErr(C.int(r.imm))
	}
	st := C.gr_request_status(r.ptr)
	if Status(st) == ErrInProgress {
		return false, nil
	}
	return true, statusErr(st)
}

// Cancel asks UCX to cancel the operation. A receive not yet matched then
// completes with ErrCanceled; an operation that already finished, or a
// send already under way, completes normally. The callback runs either way,
// on a later Progress or Wait.
func (r *Request) Cancel() {
	if r.done || r.ptr == nil || r.w.h == nil {
		return
	}
	C.gr_request_cancel(r.w.h, r.ptr)
}

// finish records the result; the UCX request was already freed by C.
func (r *Request) finish(st Status, length int, tag Tag) {
	r.done = true
	r.ptr = nil
	if r.pin != nil {
		r.pin.Unpin()
		r.w.pinners = append(r.w.pinners, r.pin)
		r.pin = nil
	}
	r.c = Completion{Length: length, Tag: tag}
	if st != OK {
		r.c.Err = st
	}
}
