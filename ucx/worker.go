package ucx

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"time"
	"unsafe"
)

// ThreadMode is how a worker may be used from threads (ucs_thread_mode_t).
type ThreadMode int

const (
	// ThreadSerialized (the default): any goroutine, one call at a time.
	// This fits Go, where one goroutine may run on different OS threads.
	ThreadSerialized ThreadMode = iota
	// ThreadSingle: UCX may assume one thread; lock the progress goroutine
	// to its OS thread (runtime.LockOSThread) before creating the worker.
	ThreadSingle
)

// WorkerOptions configure NewWorker.
type WorkerOptions struct {
	ThreadMode ThreadMode
	// SpinBeforeWait makes Wait progress busily for up to this long before
	// it arms the worker and sleeps: lower latency for replies that come
	// quickly, at the price of that much CPU per idle Wait. Zero (the
	// default) sleeps at once, which is best when ranks outnumber cores.
	SpinBeforeWait time.Duration
}

// eventBatch is how many completions one cgo call hands over at most.
const eventBatch = 64

// Worker is a UCP worker (ucp_worker_h): a progress engine with its own
// endpoints and tag matching. All methods except Signal must be called
// from one goroutine at a time, normally the rank's progress goroutine.
type Worker struct {
	ctx        *Context
	h          *C.gr_worker_t
	efd        int
	events     []C.gr_event_t // filled by C, read by absorb
	batch      []delivery     // completions absorbed but not yet delivered
	bpos       int
	delivering bool
	pending    map[*Request]struct{}
	// slots name the requests in flight to C: a request's user data is
	// its slot + 1, taken from free when posted and given back when its
	// completion is absorbed. A global runtime/cgo.Handle per operation
	// did the same through a sync.Map: three allocations an operation
	// and a lock shared by every worker of the process.
	slots []*Request
	free  []uint32
	// pinners pin Go-heap buffers while UCX holds them, reused: a
	// runtime.Pinner that pins for the first time allocates its state and
	// sets a finalizer on it (the runtime keeps one spare per P, not one
	// per request in flight), the dearest step of a small post in a
	// profile of the team layer. A pinner goes back here when its
	// request completes.
	pinners []*runtime.Pinner
	// reqOut receives the UCX request of a post (C writes it): one slot
	// for the worker's life, where a local variable passed to C would be
	// a heap allocation per operation.
	reqOut []uintptr
	eps    map[uint64]*Endpoint
	nextEP uint64
	spinUS int64
}

type delivery struct {
	r   *Request
	ep  *Endpoint
	err error
}

// NewWorker creates a worker on the context.
func (c *Context) NewWorker(opts WorkerOptions) (*Worker, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return nil, errClosed
	}
	var mode C.int
	switch opts.ThreadMode {
	case ThreadSerialized:
		mode = C.UCS_THREAD_MODE_SERIALIZED
	case ThreadSingle:
		mode = C.UCS_THREAD_MODE_SINGLE
	default:
		return nil, fmt.Errorf("ucx: unknown thread mode %d", opts.ThreadMode)
	}
	w := &Worker{
		ctx:     c,
		events:  make([]C.gr_event_t, eventBatch),
		batch:   make([]delivery, 0, eventBatch),
		pending: make(map[*Request]struct{}),
		reqOut:  make([]uintptr, 1),
		eps:     make(map[uint64]*Endpoint),
		spinUS:  opts.SpinBeforeWait.Microseconds(),
	}
	if st := C.gr_worker_create(c.h, mode, &w.h); st != 0 {
		return nil, fmt.Errorf("ucx: worker create: %w", Status(st))
	}
	w.efd = int(C.gr_worker_efd(w.h))
	c.workers++
	return w, nil
}

// Address returns this worker's address, to be sent to peers out of band
// (the bootstrap) so they can Connect. The bytes are a copy.
func (w *Worker) Address() ([]byte, error) {
	if w.h == nil {
		return nil, errClosed
	}
	var p unsafe.Pointer
	var n C.size_t
	if st := C.gr_worker_address(w.h, &p, &n); st != 0 {
		return nil, fmt.Errorf("ucx: worker address: %w", Status(st))
	}
	b := C.GoBytes(p, C.int(n))
	C.gr_worker_release_address(w.h, p)
	return b, nil
}

// EventFD is the worker's event file descriptor, or -1 when the context
// has no FeatureWakeup. Wait uses it; it is exposed for callers that
// multiplex several fds themselves: Progress until it returns 0, Arm, and
// poll the fd only if Arm returned nil (ErrBusy means progress again).
func (w *Worker) EventFD() int { return w.efd }

// Arm prepares the worker's event fd for a wait (ucp_worker_arm). It
// returns ErrBusy (unwrapped) when events are already pending and the
// caller must progress instead of sleeping. Wait does all this itself.
func (w *Worker) Arm() error {
	if w.h == nil {
		return errClosed
	}
	if w.efd < 0 {
		return errors.New("ucx: arm: the context has no wakeup feature")
	}
	return statusErr(C.gr_worker_arm(w.h))
}

// Pending is the number of posted operations whose completion has not been
// delivered yet.
func (w *Worker) Pending() int { return len(w.pending) }

// Progress advances communication and runs the callbacks of operations
// that completed, returning how many completions (and endpoint errors) it
// delivered. It never blocks.
func (w *Worker) Progress() int {
	if w.h == nil {
		return 0
	}
	if w.delivering {
		C.gr_progress(w.h, nil, 0) // advance only; completions stay queued
		return 0
	}
	n := w.deliver()
	for {
		k := int(C.gr_progress(w.h, &w.events[0], C.int(len(w.events))))
		if k == 0 {
			return n
		}
		w.absorb(k)
		n += w.deliver()
		if k < len(w.events) {
			return n
		}
	}
}

// Wait is Progress that sleeps when there is nothing to do: it arms the
// worker and blocks on its event fd until UCX has work, Signal is called,
// or timeout passes, so an idle rank uses no CPU. It returns the number of
// completions delivered; (0, nil) means the timeout passed or Signal woke
// it. A timeout of zero or less makes it the same as Progress.
func (w *Worker) Wait(timeout time.Duration) (int, error) {
	if w.h == nil {
		return 0, errClosed
	}
	n := w.Progress()
	if n > 0 || w.delivering || timeout <= 0 {
		return n, nil
	}
	k := int(C.gr_wait(w.h, C.int64_t(timeout.Microseconds()), C.int64_t(w.spinUS), &w.events[0], C.int(len(w.events))))
	if k < 0 {
		return 0, fmt.Errorf("ucx: wait: %w", Status(k))
	}
	if k > 0 {
		w.absorb(k)
		n = w.deliver()
		if k == len(w.events) {
			n += w.Progress()
		}
	}
	return n, nil
}

// Signal wakes a Wait in progress (or makes the next one return at once).
// It is the one method that is safe to call from any goroutine, while the
// worker is open.
func (w *Worker) Signal() error {
	h := w.h
	if h == nil {
		return errClosed
	}
	if st := C.gr_worker_signal(h); st != 0 {
		return fmt.Errorf("ucx: worker signal: %w", Status(st))
	}
	return nil
}

// WaitRequest runs Wait until r is done or timeout passes, delivering
// other completions on the way. It returns r's error, or an error wrapping
// ErrTimedOut. Handy for bootstrap and tests; executors should keep one
// progress loop instead.
func (w *Worker) WaitRequest(r *Request, timeout time.Duration) error {
	if w.delivering && !r.done {
		return errors.New("ucx: WaitRequest called from a completion callback")
	}
	deadline := time.Now().Add(timeout)
	for !r.done {
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("ucx: request not done after %v: %w", timeout, ErrTimedOut)
		}
		if _, err := w.Wait(left); err != nil {
			return err
		}
	}
	return r.c.Err
}

// Flush waits until every operation posted on the worker has completed at
// the transport level (ucp_worker_flush_nbx), at most timeout.
func (w *Worker) Flush(timeout time.Duration) error {
	if w.h == nil {
		return errClosed
	}
	if st := C.gr_worker_flush(w.h, C.int64_t(timeout.Microseconds())); st != 0 {
		return fmt.Errorf("ucx: worker flush: %w", Status(st))
	}
	return nil
}

// TagRecv posts a receive of at most len(buf) bytes for a message whose
// tag matches tag under mask. cb (may be nil) runs on the progress
// goroutine when it completes; a longer message completes with
// ErrMessageTruncated.
//
// Buffers: UCX writes buf after TagRecv returns, so the memory must not
// move or be freed until the completion. Go's collector does not move
// objects, and the package pins a Go-heap buf (runtime.Pinner) until the
// completion, as cgo requires; buffers from Alloc (outside the Go heap)
// need no pinning and are the better choice for large or long-lived ones.
// Do not read or write buf until the completion.
func (w *Worker) TagRecv(buf []byte, tag, mask Tag, cb Callback) (*Request, error) {
	var p unsafe.Pointer
	if len(buf) > 0 {
		p = unsafe.Pointer(&buf[0])
	}
	return w.tagRecv(p, uintptr(p), len(buf), MemUnknown, tag, mask, cb)
}

// TagRecvAddr is TagRecv into n bytes at addr, memory that is not Go's (C,
// mmap or device memory) of type mt (MemUnknown lets UCX detect it).
func (w *Worker) TagRecvAddr(addr uintptr, n int, mt MemoryType, tag, mask Tag, cb Callback) (*Request, error) {
	return w.tagRecv(nil, addr, n, mt, tag, mask, cb)
}

func (w *Worker) tagRecv(pin unsafe.Pointer, addr uintptr, n int, mt MemoryType, tag, mask Tag, cb Callback) (*Request, error) {
	if w.h == nil {
		return nil, errClosed
	}
	if n < 0 {
		return nil, fmt.Errorf("ucx: tag recv: negative length %d", n)
	}
	r := w.newRequest(cb, pin)
	rc := C.gr_tag_recv(w.h, C.uintptr_t(addr), C.size_t(n), C.uint64_t(tag), C.uint64_t(mask), C.int(mt), C.uint64_t(r.h), w.out())
	return w.posted(r, rc, w.takeOut()), nil
}

func (w *Worker) newRequest(cb Callback, pin unsafe.Pointer) *Request {
	r := &Request{w: w, cb: cb}
	if pin != nil {
		if k := len(w.pinners); k > 0 {
			r.pin, w.pinners = w.pinners[k-1], w.pinners[:k-1]
		} else {
			r.pin = new(runtime.Pinner)
		}
		r.pin.Pin(pin)
	}
	if k := len(w.free); k > 0 {
		i := w.free[k-1]
		w.free = w.free[:k-1]
		w.slots[i] = r
		r.h = uint64(i) + 1
	} else {
		w.slots = append(w.slots, r)
		r.h = uint64(len(w.slots))
	}
	return r
}

// out is where a post's C call writes the UCX request; takeOut reads it.
func (w *Worker) out() *unsafe.Pointer { return (*unsafe.Pointer)(unsafe.Pointer(&w.reqOut[0])) }

func (w *Worker) takeOut() unsafe.Pointer {
	p := *w.out()
	w.reqOut[0] = 0
	return p
}

// request takes back the request C named by h (its slot + 1).
func (w *Worker) request(h uint64) *Request {
	if h == 0 || h > uint64(len(w.slots)) || w.slots[h-1] == nil {
		panic(fmt.Sprintf("ucx: completion for unknown request %d", h))
	}
	r := w.slots[h-1]
	w.slots[h-1] = nil
	w.free = append(w.free, uint32(h-1))
	return r
}

// posted files a request after the C call, which always posts: rc is 1
// while in flight, else the status it finished with at once (its
// completion is queued and delivered like any other).
func (w *Worker) posted(r *Request, rc C.int, req unsafe.Pointer) *Request {
	if rc == 1 {
		r.ptr = req
	} else {
		r.imm = Status(rc)
	}
	w.pending[r] = struct{}{}
	return r
}

// absorb records the results of k events from C before any callback runs,
// so a callback can never see (or cancel) a request whose UCX object is
// already freed.
func (w *Worker) absorb(k int) {
	for i := 0; i < k; i++ {
		ev := &w.events[i]
		st := Status(ev.status)
		switch ev.kind {
		case C.GR_EV_OP:
			r := w.request(uint64(ev.handle))
			r.finish(st, int(ev.length), Tag(ev.sender_tag))
			delete(w.pending, r)
			w.batch = append(w.batch, delivery{r: r})
		case C.GR_EV_EP_ERROR:
			ep := w.eps[uint64(ev.handle)]
			if ep == nil || ep.err != nil {
				continue
			}
			ep.err = st
			w.batch = append(w.batch, delivery{ep: ep, err: st})
		}
	}
}

// deliver runs the callbacks of absorbed completions. If a callback panics,
// the panic goes up to the caller of Progress; the rest are delivered by
// the next call.
func (w *Worker) deliver() int {
	n := 0
	w.delivering = true
	defer func() { w.delivering = false }()
	for w.bpos < len(w.batch) {
		d := w.batch[w.bpos]
		w.batch[w.bpos] = delivery{}
		w.bpos++
		n++
		switch {
		case d.r != nil && d.r.cb != nil:
			d.r.cb(d.r.c)
		case d.ep != nil && d.ep.onError != nil:
			d.ep.onError(d.err)
		}
	}
	w.batch = w.batch[:0]
	w.bpos = 0
	return n
}

// closeDrain bounds how long Close waits for canceled operations.
const closeDrain = time.Second

// Close cancels pending receives, force-closes the worker's endpoints,
// delivers the resulting completions (callbacks see ErrCanceled or a peer
// error), and destroys the worker. Requests still pending after that are
// marked done with ErrCanceled without a callback. It must not be called
// from a callback.
func (w *Worker) Close() error {
	if w.h == nil {
		return nil
	}
	if w.delivering {
		return errors.New("ucx: worker Close called from a completion callback")
	}
	for r := range w.pending {
		r.Cancel()
	}
	for _, ep := range w.eps {
		_, _ = ep.CloseNB(true, nil)
	}
	deadline := time.Now().Add(closeDrain)
	for len(w.pending) > 0 && time.Now().Before(deadline) {
		w.Progress()
	}
	C.gr_worker_destroy(w.h)
	w.h = nil
	for r := range w.pending {
		w.request(r.h)
		r.finish(ErrCanceled, 0, 0)
		delete(w.pending, r)
	}
	w.ctx.mu.Lock()
	w.ctx.workers--
	w.ctx.mu.Unlock()
	return nil
}

// CHandle is the worker's C record (a gr_worker_t*), for C code of this
// program that posts on the worker without entering Go (package cexec,
// through shim.h's gr_*_c calls). It stays valid until Close.
func (w *Worker) CHandle() unsafe.Pointer { return unsafe.Pointer(w.h) }
