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
	call direct.Call
}

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
