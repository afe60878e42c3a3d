package team

import (
	"errors"
	"fmt"
	"time"

	"github.com/goring-hpc/goring/exec"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// A Runner moves the bytes of one call of a team's collectives: the sched
// program's messages on one Machine or on several lanes, or an engine's
// protocol of its own (a node kernel per GPU, the leader on a shared GPU,
// reads of the peers' memory). It is a state machine driven from the
// team's progress, as exec.Call is, and never blocks:
//
//   - Begin puts the call on the wire as the team's next call (every
//     runner starts a fresh tag sequence on the transports it uses), with
//     the team's watch and deadline;
//   - Progress advances it once: done when the call has completed, device
//     work included; an error when it failed, after cancelling what it had
//     in flight;
//   - Abort ends a begun call because of cause (the call withdrawn, the
//     team destroyed, a peer dead) and returns the call's error.
//
// A runner that finds, from Begin or Progress, that it cannot run the
// call returns an error that wraps errFallBack: it must find so on every
// rank alike and before anything is written, for the call then runs as
// the next runner of its selection on every rank (Select). Runners are
// built by the selection for one Coll, which owns the call's memory, and
// serve its every post.
type Runner interface {
	Begin() error
	Progress() (done bool, err error)
	Abort(cause error) error
}

// errFallBack says a runner cannot run the call: the next runner of the
// selection runs it.
var errFallBack = errors.New("the call runs as the next runner")

// fallBack is errFallBack for the reason why.
func fallBack(why error) error { return fmt.Errorf("%w: %w", errFallBack, why) }

// nextCall starts the team's next call on its transport (a fresh tag
// sequence) and returns what a runner begins it with: the transport, the
// watch over this host's peers, and the deadline.
func (t *Team) nextCall() (*ucxmp.Transport, exec.Watch, time.Time) {
	t.tr.NextCall()
	return t.tr, t.watch, t.deadline()
}
