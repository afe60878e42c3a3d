package nodeexec

import (
	"errors"
	"time"

	"github.com/goring-hpc/goring/cuda"
)

// Small calls go to the rank's resident kernel (cuda.Resident): the host
// posts them into pinned memory and reads their end there, instead of a
// kernel launch and an event query a call. The kernel stays on the GPU
// while calls keep coming and leaves after ResidentIdle without one, and
// before any call that runs as its own kernel, so that it never holds SMs
// another node kernel of the team wants, nor (for long) a
// cudaDeviceSynchronize.

// DefaultResidentMax is the largest call (the bytes cuda.DefaultNodeGrid
// sizes by) that runs on the resident kernel: those of up to 16 CTAs.
const DefaultResidentMax = 1 << 20

// ResidentIdle is how long the resident kernel waits for the next call
// before it leaves the GPU: long beside the host's time between two calls
// of a loop (a few µs), short beside a host that stopped calling.
const ResidentIdle = 200 * time.Microsecond

// SetResident sets the largest call that runs on the resident kernel
// (0: none). Every rank of the team must set the same: a call's grid
// follows its size either way, but which calls are resident does not
// change what peers see.
func (l *Local) SetResident(maxBytes int) { l.resMax = maxBytes }

// beginResident posts c's one kernel call to the resident kernel; false
// (and no error) when the kernel has no body for it.
func (l *Local) beginResident(nc cuda.NodeCall, g cuda.NodeGrid) (bool, error) {
	if l.res == nil {
		r, err := l.dev.NewResident(l.grid(l.resMax).Blocks, l.abortPtr)
		if err != nil {
			return false, err
		}
		l.res = r
		l.idle = newIdleTimer(r)
	}
	if err := l.res.Post(nc, g); err != nil {
		if errors.Is(err, cuda.ErrNotResident) {
			return false, nil
		}
		return false, err
	}
	l.idle.reset()
	return true, nil
}

// leaveResident makes the resident kernel leave the GPU before a call
// that runs as its own kernel.
func (l *Local) leaveResident() {
	if l.res != nil {
		l.res.Leave()
	}
}

// closeResident stops the idle timer and the kernel.
func (l *Local) closeResident() error {
	if l.res == nil {
		return nil
	}
	l.idle.stop()
	err := l.res.Close()
	l.res = nil
	return err
}

// idleTimer makes a resident kernel leave after ResidentIdle without a
// call, checking again later while a call runs.
type idleTimer struct{ t *time.Timer }

func newIdleTimer(r *cuda.Resident) *idleTimer {
	it := &idleTimer{}
	it.t = time.AfterFunc(time.Hour, func() {
		if !r.LeaveIdle() {
			it.t.Reset(ResidentIdle)
		}
	})
	it.reset()
	return it
}

func (it *idleTimer) reset() { it.t.Reset(ResidentIdle) }
func (it *idleTimer) stop()  { it.t.Stop() }
