package cuda

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"time"
)

// Event marks a point in a stream: it completes when the work queued
// before it has. Timing events also give the GPU time between two points.
type Event struct {
	dev    *Device
	e      C.gc_event
	timing bool

	mu        sync.Mutex
	destroyed bool
}

// NewEvent creates an event on d; timing=false gives a lighter event that
// can only order work (CU_EVENT_DISABLE_TIMING).
func (d *Device) NewEvent(timing bool) (*Event, error) {
	ctx, err := d.context()
	if err != nil {
		return nil, err
	}
	var flags C.uint
	if !timing {
		flags = eventDisableTiming
	}
	e := &Event{dev: d, timing: timing}
	if err := check("cuEventCreate", C.gc_event_create(ctx, &e.e, flags)); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *Event) handle() (C.gc_event, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.destroyed {
		return nil, fmt.Errorf("%w: event destroyed", ErrFreed)
	}
	return e.e, nil
}

// Record places the event at the current end of s (a stream of the
// event's device).
func (e *Event) Record(s *Stream) error {
	ce, err := e.handle()
	if err != nil {
		return err
	}
	cs, err := s.on(e.dev)
	if err != nil {
		return err
	}
	ctx, err := e.dev.context()
	if err != nil {
		return err
	}
	return check("cuEventRecord", C.gc_event_record(ctx, ce, cs))
}

// Done reports whether the work before the event has finished (cuEventQuery).
func (e *Event) Done() (bool, error) {
	ce, err := e.handle()
	if err != nil {
		return false, err
	}
	ctx, err := e.dev.context()
	if err != nil {
		return false, err
	}
	r := C.gc_event_query(ctx, ce)
	if Result(r) == ErrNotReady {
		return false, nil
	}
	return r == 0, check("cuEventQuery", r)
}

// Synchronize waits until the event has completed.
func (e *Event) Synchronize() error {
	ce, err := e.handle()
	if err != nil {
		return err
	}
	ctx, err := e.dev.context()
	if err != nil {
		return err
	}
	return check("cuEventSynchronize", C.gc_event_synchronize(ctx, ce))
}

// Elapsed is the GPU time from start to end, two completed timing events
// (cuEventElapsedTime; resolution about half a microsecond).
func Elapsed(start, end *Event) (time.Duration, error) {
	cs, err := start.handle()
	if err != nil {
		return 0, err
	}
	ce, err := end.handle()
	if err != nil {
		return 0, err
	}
	if !start.timing || !end.timing {
		return 0, fmt.Errorf("cuda: elapsed time needs timing events: %w", ErrInvalidHandle)
	}
	ctx, err := start.dev.context()
	if err != nil {
		return 0, err
	}
	var ms C.float
	if err := check("cuEventElapsedTime", C.gc_event_elapsed_ms(ctx, &ms, cs, ce)); err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

// Destroy releases the event.
func (e *Event) Destroy() error {
	ce, err := e.handle()
	if err != nil {
		return err
	}
	ctx, err := e.dev.context()
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.destroyed = true
	e.mu.Unlock()
	return check("cuEventDestroy", C.gc_event_destroy(ctx, ce))
}
