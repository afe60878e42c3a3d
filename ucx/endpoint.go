package ucx

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"time"
	"unsafe"
)

// Endpoint is a connection from a worker to one remote worker (ucp_ep_h).
type Endpoint struct {
	w       *Worker
	ep      *C.gr_ep_t
	id      uint64 // key in w.eps, carried by C for error events
	err     error
	onError func(error)
}

// CloseTimeout bounds how long Endpoint.Close waits.
var CloseTimeout = 5 * time.Second

// EndpointOptions configure Connect.
type EndpointOptions struct {
	// NoPeerErrors turns UCX's error handling mode "peer" off. With it on
	// (the default) a dead peer fails the endpoint's operations with a
	// Status (see IsPeerFailure) and runs OnError; nothing crashes. But
	// UCX 1.13 then uses only transports that detect peer failure, which
	// on one host means TCP instead of shared memory (posix/sysv/cma), at
	// a large cost in bandwidth. Set NoPeerErrors for same-host data paths
	// whose peers another mechanism watches (the launcher's coordinator,
	// deadlines); UCX may then hang or abort on a dead peer instead.
	NoPeerErrors bool
	// OnError, if not nil, runs once on the progress goroutine when UCX
	// reports that the endpoint failed.
	OnError func(error)
}

// Connect creates an endpoint to the worker whose address (from
// Worker.Address on the remote side) is addr.
func (w *Worker) Connect(addr []byte, opts EndpointOptions) (*Endpoint, error) {
	if w.h == nil {
		return nil, errClosed
	}
	if len(addr) == 0 {
		return nil, errors.New("ucx: connect: empty worker address")
	}
	w.nextEP++
	ep := &Endpoint{w: w, id: w.nextEP, onError: opts.OnError}
	caddr := C.CBytes(addr)
	defer C.free(caddr)
	peer := C.int(1)
	if opts.NoPeerErrors {
		peer = 0
	}
	if st := C.gr_ep_create(w.h, caddr, peer, C.uint64_t(ep.id), &ep.ep); st != 0 {
		return nil, fmt.Errorf("ucx: connect: %w", Status(st))
	}
	w.eps[ep.id] = ep
	return ep, nil
}

// Err is the error UCX reported for the endpoint, or nil.
func (ep *Endpoint) Err() error { return ep.err }

// SetOnError replaces the function run when the endpoint fails
// (EndpointOptions.OnError): an endpoint kept for a later user reports to
// that user.
func (ep *Endpoint) SetOnError(f func(error)) { ep.onError = f }

// TagSend sends buf with tag. See Worker.TagRecv for the rules on buffers
// and callbacks. A zero-length buf sends an empty message.
func (ep *Endpoint) TagSend(buf []byte, tag Tag, cb Callback) (*Request, error) {
	var p unsafe.Pointer
	if len(buf) > 0 {
		p = unsafe.Pointer(&buf[0])
	}
	return ep.tagSend(p, uintptr(p), len(buf), MemUnknown, tag, cb)
}

// TagSendAddr sends n bytes at addr, memory that is not Go's (C, mmap or
// device memory), with its memory type given (MemUnknown lets UCX detect
// it). The memory must stay valid until the completion.
func (ep *Endpoint) TagSendAddr(addr uintptr, n int, mt MemoryType, tag Tag, cb Callback) (*Request, error) {
	return ep.tagSend(nil, addr, n, mt, tag, cb)
}

func (ep *Endpoint) tagSend(pin unsafe.Pointer, addr uintptr, n int, mt MemoryType, tag Tag, cb Callback) (*Request, error) {
	w := ep.w
	if w.h == nil || ep.ep == nil {
		return nil, errClosed
	}
	if n < 0 {
		return nil, fmt.Errorf("ucx: tag send: negative length %d", n)
	}
	r := w.newRequest(cb, pin)
	rc := C.gr_tag_send(w.h, ep.ep, C.uintptr_t(addr), C.size_t(n), C.uint64_t(tag), C.int(mt), C.uint64_t(r.h), w.out())
	return w.posted(r, rc, w.takeOut()), nil
}

// CloseNB posts the close of the endpoint and returns at once; cb (may be
// nil) runs when it completes, like a send's. Without force UCX first
// flushes the sends already posted and tells the peer, which must be
// progressing for that to finish; with force, or when the endpoint has
// failed, it drops them (they complete with errors). The endpoint is
// unusable from this call on.
func (ep *Endpoint) CloseNB(force bool, cb Callback) (*Request, error) {
	w := ep.w
	if ep.ep == nil || w.h == nil {
		return nil, errClosed
	}
	f := C.int(0)
	if force || ep.err != nil {
		f = 1
	}
	r := w.newRequest(cb, nil)
	rc := C.gr_ep_close(ep.ep, f, C.uint64_t(r.h), w.out())
	ep.ep = nil // C frees its half when the close completes
	delete(w.eps, ep.id)
	return w.posted(r, rc, w.takeOut()), nil
}

// Close is CloseNB followed by WaitRequest for at most CloseTimeout: it
// runs this worker's progress (and delivers its completions) meanwhile.
// An error from a failed endpoint's close is not reported again, and
// neither is a peer that went first: at the end of a job every rank
// closes at once, and over TCP the peer that closes first resets the
// connection under the other's flush (UCX ends the flush with the reset,
// or cancels it), when there is nothing left to deliver.
func (ep *Endpoint) Close() error {
	if ep.ep == nil || ep.w.h == nil {
		return nil
	}
	failed := ep.err != nil
	r, err := ep.CloseNB(false, nil)
	if err != nil {
		return err
	}
	if err := ep.w.WaitRequest(r, CloseTimeout); err != nil && !failed && !IsPeerFailure(err) && !errors.Is(err, ErrCanceled) {
		return fmt.Errorf("ucx: endpoint close: %w", err)
	}
	return nil
}

// CHandle is the endpoint's C record (a gr_ep_t*), for C code that posts
// on it without entering Go (see Worker.CHandle). Valid until Close.
func (e *Endpoint) CHandle() unsafe.Pointer { return unsafe.Pointer(e.ep) }
