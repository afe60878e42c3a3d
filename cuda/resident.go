package cuda

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/devsync"
)

// The resident node kernel (kernels/node.cu goring_node_resident): one
// launch that stays on the GPU and runs a rank's small node calls one
// after another. A call costs the host a few stores into pinned memory
// instead of a kernel launch, and its end is a load of pinned memory
// instead of an event query: on the GPU machines measured, a launch
// costs the host about 12 µs (docs/gpu.md, "Small calls on two H200s"),
// more than a small call's kernel takes.
//
// The price: while it waits for calls the kernel holds its CTAs' SMs,
// and anything that waits for all of the device's work
// (cudaDeviceSynchronize) waits until it leaves. Its owner makes it leave
// when calls stop coming (nodeexec: after an idle time) and before any
// other node kernel runs.

// ResidentThreads is the resident kernel's CTA size (node.cu's
// GORING_NODE_RESIDENT_THREADS).
const ResidentThreads = 512

// ErrNotResident says a call has no body in the resident kernel (only the
// common reductions and the allgather do): launch it as its own kernel.
var ErrNotResident = errors.New("cuda: the resident node kernel does not run this call")

// The mailbox in pinned host memory, as node.cu's resident_mail: the call
// number, the call's kind, its node_args; then, a cache line on, one done
// word per CTA.
const (
	mailSeq     = 0
	mailKind    = 8
	mailArgs    = 16
	residentOff = 256 // the done words
)

// residentKinds caches the resident kernel's call numbers by kernel name
// (goring_node_kind_<name>; 0: none).
type residentKinds struct {
	mu sync.Mutex
	n  map[string]uint64
}

// kind is the resident kernel's number for call c (0: it has none).
func (m *nodeModule) kind(c NodeCall) (uint64, error) {
	name := "allgather"
	if c.Alg != devsync.Allgather {
		name = nodeAlgs[c.Alg] + "_" + c.Dtype.String() + "_" + c.Op.String()
	}
	m.kinds.mu.Lock()
	defer m.kinds.mu.Unlock()
	if k, ok := m.kinds.n[name]; ok {
		return k, nil
	}
	cname := C.CString("goring_node_kind_" + name)
	defer C.free(unsafe.Pointer(cname))
	var v C.ulonglong
	k := uint64(0)
	switch r := C.gc_module_global_u64(m.ctx, m.mod, cname, &v); {
	case r == 0:
		k = uint64(v)
	case r != errNotFound:
		return 0, check("cuModuleGetGlobal(goring_node_kind_"+name+")", r)
	}
	if m.kinds.n == nil {
		m.kinds.n = map[string]uint64{}
	}
	m.kinds.n[name] = k
	return k, nil
}

// errNotFound is CUDA_ERROR_NOT_FOUND.
const errNotFound = 500

// Resident is one rank's resident node kernel: launched by its first
// Post, gone after Leave until the next Post launches it again. Its
// methods may be called from several goroutines (an idle timer's Leave).
type Resident struct {
	dev    *Device
	blocks int
	abort  DevicePtr
	stream *Stream
	ended  *Event // recorded behind every launch: the kernel has left
	words  *HostBuffer
	mail   DevicePtr // words' device address
	seq    *atomic.Uint64
	kind   *atomic.Uint64
	done   []*atomic.Uint64

	mu      sync.Mutex
	posted  uint64 // the last call number posted (leaves count)
	call    uint64 // the running call's number; 0: none
	live    bool   // launched, no leave posted since
	polls   int
	closed  bool
	running bool
}

// NewResident prepares dev's resident kernel of blocks CTAs (at least the
// most any call posted to it uses) whose waits also end when the
// host-mapped abort word is set (0: none). Nothing runs until Post.
func (d *Device) NewResident(blocks int, abort DevicePtr) (r *Resident, err error) {
	if blocks < 1 || blocks > devsync.MaxBlocks {
		return nil, fmt.Errorf("cuda: resident kernel of %d blocks (1 to %d)", blocks, devsync.MaxBlocks)
	}
	if _, err := d.nodeKernels(); err != nil {
		return nil, err
	}
	r = &Resident{dev: d, blocks: blocks, abort: abort}
	defer func() {
		if err != nil {
			_ = r.Close()
		}
	}()
	if r.words, err = d.AllocMappedHost(residentOff + 8*blocks); err != nil {
		return nil, err
	}
	if r.mail, err = r.words.MappedAddr(d, 0); err != nil {
		return nil, err
	}
	if r.seq, err = r.words.Word(mailSeq); err != nil {
		return nil, err
	}
	if r.kind, err = r.words.Word(mailKind); err != nil {
		return nil, err
	}
	r.done = make([]*atomic.Uint64, blocks)
	for b := range r.done {
		if r.done[b], err = r.words.Word(residentOff + 8*b); err != nil {
			return nil, err
		}
	}
	if r.stream, err = d.NewStream(); err != nil {
		return nil, err
	}
	if r.ended, err = d.NewEvent(false); err != nil {
		return nil, err
	}
	return r, nil
}

// Post runs call c, on a grid of g.Blocks CTAs (as NodeLaunchAsync would
// launch it; g.Threads is the resident kernel's own), launching the
// kernel first if it is not on the GPU. The previous call must have
// ended (Done). ErrNotResident: the kernel has no body for c, nothing
// was posted.
func (r *Resident) Post(c NodeCall, g NodeGrid) error {
	m, err := r.dev.nodeKernels()
	if err != nil {
		return err
	}
	if g.Blocks > r.blocks {
		return fmt.Errorf("cuda: a node call of %d blocks posted to a resident kernel of %d", g.Blocks, r.blocks)
	}
	g.Threads = ResidentThreads
	a, err := nodeArgs(c, g)
	if err != nil {
		return err
	}
	k, err := m.kind(c)
	if err != nil {
		return err
	}
	if k == 0 {
		return ErrNotResident
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return errors.New("cuda: resident kernel closed")
	case r.running:
		return errors.New("cuda: resident kernel: a call posted while one runs")
	}
	if !r.live {
		if err := r.launch(m); err != nil {
			return err
		}
	}
	p, err := r.words.livePtr()
	if err != nil {
		return err
	}
	// The call's fields, then its number: the kernel reads the fields
	// only after it has seen the number (x86 keeps stores in order, and
	// the atomic store is a full barrier).
	*(*C.gc_node_args)(unsafe.Add(p, mailArgs)) = a
	r.kind.Store(k)
	r.posted++
	r.call, r.running, r.polls = r.posted, true, 0
	r.seq.Store(r.posted)
	return nil
}

// launch starts the kernel, waiting for call number posted+1 (the caller
// holds mu).
func (r *Resident) launch(m *nodeModule) error {
	ctx, cs, err := r.stream.live()
	if err != nil {
		return err
	}
	if rc := C.gc_launch_resident(ctx, m.resident, C.uint(r.blocks), ResidentThreads, cs,
		C.gc_dptr(r.mail), C.gc_dptr(r.mail+residentOff), C.ulonglong(r.posted+1), C.gc_dptr(r.abort)); rc != 0 {
		return check("cuLaunchKernel(goring_node_resident)", rc)
	}
	if err := r.ended.Record(r.stream); err != nil {
		return err
	}
	r.live = true
	return nil
}

// Done reports whether the running call has ended on every CTA, without
// blocking. A kernel that left before it ended the call (the abort word,
// or a fault) is an error.
func (r *Resident) Done() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.running {
		return true, nil
	}
	for _, d := range r.done {
		if d.Load() < r.call {
			// Now and then: has the kernel left?
			if r.polls++; r.polls%256 == 0 {
				if left, err := r.ended.Done(); err != nil || left {
					r.running, r.live = false, false
					if err == nil {
						err = fmt.Errorf("cuda: the resident node kernel left before call %d ended", r.call)
					}
					return false, err
				}
			}
			return false, nil
		}
	}
	r.running = false
	return true, nil
}

// Leave tells the kernel to leave the GPU once the running call (if any)
// has ended; it returns at once (false: it was not on the GPU, or a call
// is running and it stays). The next Post launches it again.
func (r *Resident) Leave() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leave()
}

// LeaveIdle is Leave for a timer: a call that has ended on the GPU but
// that no one has polled yet (its caller may be blocked, in a
// cudaDeviceSynchronize that waits for this very kernel) does not keep
// the kernel; Done reports it ended. False: a call is still running, try
// again later.
func (r *Resident) LeaveIdle() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running {
		for _, d := range r.done {
			if d.Load() < r.call {
				return false
			}
		}
		r.running = false
	}
	r.leave()
	return true
}

// leave posts the leave (the caller holds mu).
func (r *Resident) leave() bool {
	if !r.live || r.running || r.closed {
		return false
	}
	r.kind.Store(0)
	r.posted++
	r.seq.Store(r.posted)
	r.live = false
	return true
}

// Wait blocks until the kernel has left (after Leave, or after the abort
// word stopped it).
func (r *Resident) Wait() error {
	if r.ended == nil {
		return nil
	}
	return r.ended.Synchronize()
}

// Close makes the kernel leave, waits for it, and frees what it used. A
// call still running must have ended or been stopped by the abort word:
// the kernel leaves once it is out of the call, whatever its peers do
// next.
func (r *Resident) Close() error {
	r.mu.Lock()
	if r.live && !r.closed {
		// Also while a call runs: the kernel read the call's fields when
		// it began, and reads the mailbox again only after it.
		r.kind.Store(0)
		r.posted++
		r.seq.Store(r.posted)
		r.live, r.running = false, false
	}
	r.closed = true
	r.mu.Unlock()
	var errs []error
	if r.ended != nil {
		errs = append(errs, r.ended.Synchronize(), r.ended.Destroy())
	}
	if r.stream != nil {
		errs = append(errs, r.stream.Destroy())
	}
	if r.words != nil {
		errs = append(errs, r.words.Free())
	}
	return errors.Join(errs...)
}

// ResidentRuns says whether the resident kernel has a body for calls of
// alg on dt and op (any dtype for the allgather).
func (d *Device) ResidentRuns(alg devsync.Algorithm, dt coll.Dtype, op coll.Op) (bool, error) {
	m, err := d.nodeKernels()
	if err != nil {
		return false, err
	}
	k, err := m.kind(NodeCall{Alg: alg, Dtype: dt, Op: op})
	return k != 0, err
}
