package cuda

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

const (
	streamNonBlocking  = 0x1 // CU_STREAM_NON_BLOCKING
	eventDisableTiming = 0x2 // CU_EVENT_DISABLE_TIMING

	streamLegacy    = 0x1 // CU_STREAM_LEGACY, a handle of the legacy default stream
	streamPerThread = 0x2 // CU_STREAM_PER_THREAD, the calling thread's default stream
)

// Stream is a CUDA stream of one device: work queued on it runs in order,
// and work on different streams may overlap (copy engines in both
// directions, kernels). Streams are created non-blocking, so they do not
// wait for the legacy default stream that the synchronous copies use.
type Stream struct {
	dev *Device
	s   C.gc_stream

	mu        sync.Mutex
	destroyed bool
	// foreign: the caller's stream (ForeignStream), which Destroy leaves
	// to its owner.
	foreign bool

	list copyList // CopyListAsync's and ReduceListAsync's descriptors
}

// NewStream creates a stream on d (cuStreamCreate, CU_STREAM_NON_BLOCKING).
func (d *Device) NewStream() (*Stream, error) {
	ctx, err := d.context()
	if err != nil {
		return nil, err
	}
	s := &Stream{dev: d}
	if err := check("cuStreamCreate", C.gc_stream_create(ctx, &s.s, streamNonBlocking)); err != nil {
		return nil, err
	}
	return s, nil
}

// ForeignStream is a stream that the caller made and owns (a CUstream,
// as UCC's execution engine or a framework hands it over), so that work
// goring queues on it runs after the work the caller queued before, and
// the caller's later work after goring's. It must be a stream of d's
// primary context, the one goring works in (a framework's streams are,
// PyTorch's included); the legacy default stream (0 or CU_STREAM_LEGACY)
// is refused, as it would also order goring's work against every
// blocking stream of the context, and so is CU_STREAM_PER_THREAD, a
// different stream on every OS thread. Destroy forgets the stream and
// leaves it to its owner.
func (d *Device) ForeignStream(handle uintptr) (*Stream, error) {
	ctx, err := d.context()
	if err != nil {
		return nil, err
	}
	// 0 and CU_STREAM_LEGACY are the legacy default stream.
	// CU_STREAM_PER_THREAD is the calling OS thread's default stream:
	// another stream whenever the goroutine moves, and cuStreamGetCtx
	// answers for it with the thread's current context, which goring's
	// own calls leave as d's, so the check below would let it through.
	switch handle {
	case 0, streamLegacy:
		return nil, fmt.Errorf("cuda: the legacy default stream is not taken as a caller's stream")
	case streamPerThread:
		return nil, fmt.Errorf("cuda: the per-thread default stream is not taken as a caller's stream")
	}
	cs := *(*C.gc_stream)(unsafe.Pointer(&handle))
	var owner C.gc_ctx
	if err := check("cuStreamGetCtx", C.gc_stream_ctx(cs, &owner)); err != nil {
		return nil, err
	}
	if owner != ctx {
		return nil, fmt.Errorf("%w: the stream is of another context than device %d's primary one", ErrDeviceMismatch, d.ordinal)
	}
	return &Stream{dev: d, s: cs, foreign: true}, nil
}

// Handle is the stream's CUstream, for a caller that hands it to other
// code (goring_coll_post_stream's callers, tests of it).
func (s *Stream) Handle() uintptr { return uintptr(unsafe.Pointer(s.s)) }

// Device is the stream's device.
func (s *Stream) Device() *Device { return s.dev }

// on returns the stream handle for work of device d, or an error if the
// stream belongs to another device or was destroyed.
func (s *Stream) on(d *Device) (C.gc_stream, error) {
	if s == nil {
		return nil, fmt.Errorf("cuda: nil stream")
	}
	if s.dev.dev != d.dev {
		return nil, fmt.Errorf("%w: stream of device %d used for device %d", ErrDeviceMismatch, s.dev.ordinal, d.ordinal)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.destroyed {
		return nil, fmt.Errorf("%w: stream destroyed", ErrFreed)
	}
	return s.s, nil
}

// live returns the context and stream handle.
func (s *Stream) live() (C.gc_ctx, C.gc_stream, error) {
	cs, err := s.on(s.dev)
	if err != nil {
		return nil, nil, err
	}
	ctx, err := s.dev.context()
	return ctx, cs, err
}

// Synchronize waits until all work queued on s has finished.
func (s *Stream) Synchronize() error {
	ctx, cs, err := s.live()
	if err != nil {
		return err
	}
	return check("cuStreamSynchronize", C.gc_stream_synchronize(ctx, cs))
}

// Done reports whether all work queued on s has finished (cuStreamQuery),
// without waiting.
func (s *Stream) Done() (bool, error) {
	ctx, cs, err := s.live()
	if err != nil {
		return false, err
	}
	r := C.gc_stream_query(ctx, cs)
	if Result(r) == ErrNotReady {
		return false, nil
	}
	return r == 0, check("cuStreamQuery", r)
}

// WaitEvent makes work queued on s after this call wait until e has
// completed; e may belong to another device (cross-GPU pipelines).
func (s *Stream) WaitEvent(e *Event) error {
	ctx, cs, err := s.live()
	if err != nil {
		return err
	}
	ce, err := e.handle()
	if err != nil {
		return err
	}
	return check("cuStreamWaitEvent", C.gc_stream_wait_event(ctx, cs, ce))
}

// Destroy releases the stream; work already queued still completes (a
// stream that ran copy lists first waits for it, to free their device
// array). A ForeignStream is only forgotten: its owner destroys it.
func (s *Stream) Destroy() error {
	ctx, cs, err := s.live()
	if err != nil {
		return err
	}
	s.list.mu.Lock()
	lerr := s.list.release(s)
	s.list.mu.Unlock()
	if lerr != nil {
		return lerr
	}
	s.mu.Lock()
	s.destroyed = true
	s.mu.Unlock()
	if s.foreign {
		return nil
	}
	return check("cuStreamDestroy", C.gc_stream_destroy(ctx, cs))
}
