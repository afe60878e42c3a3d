package team

import (
	"errors"
	"time"

	"github.com/goring-hpc/goring/direct"
)

// directRunner is a call on one of package direct's backends: the leader
// on a shared GPU (onedevice.go) or cross-memory reads on the host
// (crossmem.go). One protocol, so one runner: where the ranks cannot
// reach each other's buffers (direct.ErrUnmapped, direct.ErrUnreadable)
// every rank learns it alike with nothing written and hands the call to
// the next runner, the messages.
type directRunner struct {
	c    *Coll
	cfg  direct.Config
	call *direct.Call // the team's (directCall), until release
}

// directCall is a direct.Call for a new runner: one a finished call of
// the team gave back, else a new one. A call keeps its receive buffers,
// its map of operations in flight and its plan's storage for the next
// (direct.Call is made to be reused), so a fresh one per UCC
// ucc_collective_init was about 13 KB and 4 µs of allocation on every
// rank at every call, on the path between one call's DONE and the next
// call's ARRIVE. Caller holds t.mu.
func (t *Team) directCall() *direct.Call {
	if n := len(t.directFree); n > 0 {
		c := t.directFree[n-1]
		t.directFree = t.directFree[:n-1]
		return c
	}
	return new(direct.Call)
}

// release gives the runner's call back to the team when it ended cleanly
// (done, or never begun); a failed or aborted call's is dropped. The team
// keeps at most directKeep. Caller holds t.mu (Coll.free).
func (r *directRunner) release(clean bool) {
	t := r.c.team
	if clean && r.call != nil && len(t.directFree) < directKeep {
		t.directFree = append(t.directFree, r.call)
	}
	r.call = nil
}

// directKeep bounds the calls a team keeps: one a call in flight, a few
// for calls initialised ahead of their post.
const directKeep = 4

// releaser is a runner that gives back what it took from the team when
// its Coll is freed; clean says the call ended done or never began.
type releaser interface{ release(clean bool) }

func (r *directRunner) Begin() error {
	t := r.c.team
	if r.cfg.Host != nil && t.crossOff {
		// Made before the team found its ranks cannot read each other
		// (every rank found it at the same call).
		return fallBack(direct.ErrUnreadable)
	}
	cfg := r.cfg
	cfg.Transport, cfg.Watch, cfg.Deadline = t.nextCall()
	return r.call.Begin(cfg)
}

// Progress progresses the call; a call no rank could reach the buffers
// of falls back to the messages, and on the host turns the team's
// cross-memory reads off (the kernel's answer does not change).
func (r *directRunner) Progress() (bool, error) {
	done, err := r.call.Progress(time.Time{})
	switch {
	case errors.Is(err, direct.ErrUnreadable):
		r.c.team.crossOff = true
		return false, fallBack(err)
	case errors.Is(err, direct.ErrUnmapped):
		return false, fallBack(err)
	}
	return done, err
}

func (r *directRunner) Abort(cause error) error { return r.call.Abort(cause) }
