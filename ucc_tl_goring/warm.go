//go:build ucc

package main

import (
	"sync"
	"sync/atomic"
	"time"
)

// Why a goroutine that does nothing: an MPI rank calls goring from its own
// (C) thread, and the first call into Go after that thread has spent a
// while in C (an application computing between collectives) costs
// 7-40 us while the Go runtime hands the thread a processor again; back to
// back the same call costs 0.1 us (docs/ucc.md, "Small messages: where the
// time goes"). A goroutine that wakes every period keeps the runtime's
// scheduler active, which cuts that first call to a few microseconds.
//
// It costs wake-ups (1/period a second, each a few microseconds of one
// core), so it runs only while collectives are frequent: after warmWindow
// without a collective it parks until the next one, and it exists only
// while a goring context does (UCC_TL_GORING_WAKE_US=0 turns it off).

// warmWindow is how long after the last collective the warmer keeps
// waking: long enough to span an application's computation between
// collectives, short enough that an idle rank costs nothing.
const warmWindow = 100 * time.Millisecond

// warmer is the process's one warm-keeping goroutine (the Go runtime is
// per process), shared by every context that asks for it.
type warmer struct {
	mu     sync.Mutex
	users  int
	period time.Duration
	stop   chan struct{}
	done   chan struct{}

	last   atomic.Int64 // ns since epoch of the last touch
	parked atomic.Bool  // the loop waits for wake
	wake   chan struct{}
	wakes  atomic.Int64 // times the loop woke on its timer (tests, diagnostics)
}

var (
	warm  = &warmer{}
	epoch = time.Now()
)

// acquire starts the goroutine for the first user (period > 0); later
// users share it (the first period stands).
func (w *warmer) acquire(period time.Duration) {
	if period <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.users++
	if w.users > 1 {
		return
	}
	w.period = period
	w.stop, w.done, w.wake = make(chan struct{}), make(chan struct{}), make(chan struct{}, 1)
	w.parked.Store(false)
	w.last.Store(int64(time.Since(epoch)))
	go w.loop(w.period, w.stop, w.done, w.wake)
}

// release ends the goroutine when its last user goes, and waits for it:
// nothing of goring runs after the last context is destroyed.
func (w *warmer) release(period time.Duration) {
	if period <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.users--
	if w.users > 0 {
		return
	}
	close(w.stop)
	<-w.done
}

// touch records a collective call; a parked loop resumes. It costs two
// atomic operations when the loop is awake.
func (w *warmer) touch() {
	w.last.Store(int64(time.Since(epoch)))
	if w.parked.Load() {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

func (w *warmer) loop(period time.Duration, stop, done, wake chan struct{}) {
	defer close(done)
	t := time.NewTimer(period)
	defer t.Stop()
	for {
		if time.Duration(int64(time.Since(epoch))-w.last.Load()) > warmWindow {
			w.parked.Store(true)
			// A touch between the check above and parked=true finds the
			// loop awake and sends nothing; look again before waiting.
			if time.Duration(int64(time.Since(epoch))-w.last.Load()) > warmWindow {
				select {
				case <-wake:
				case <-stop:
					return
				}
			}
			w.parked.Store(false)
		}
		t.Reset(period)
		select {
		case <-t.C:
			w.wakes.Add(1)
		case <-stop:
			return
		}
	}
}
