package exec

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
)

// ErrDeadline is the cause of a *StepError when a call's deadline passed.
var ErrDeadline = errors.New("deadline exceeded")

// ErrMappingBusy is a device engine's answer when it cannot map a peer's
// buffer during this call: an older mapping of memory the peer freed sits
// where the new one must go, and closing it now could wait for the call
// itself (a stream held until the call completes). The transfer then
// goes another way (the transport stages it through host memory), and
// the old mapping is closed between calls.
var ErrMappingBusy = errors.New("the peer's buffer cannot be mapped during this call: a mapping of memory it freed is still open where the new one goes")

// StepInfo describes one step in an error.
type StepInfo struct {
	ID   int
	Op   sched.StepOp
	Peer int   // send and recv
	Tag  int   // send and recv
	Len  int64 // bytes
}

func (s StepInfo) String() string {
	switch s.Op {
	case sched.OpSend:
		return fmt.Sprintf("step %d (send to peer %d, tag %d, %d bytes)", s.ID, s.Peer, s.Tag, s.Len)
	case sched.OpRecv:
		return fmt.Sprintf("step %d (recv from peer %d, tag %d, %d bytes)", s.ID, s.Peer, s.Tag, s.Len)
	}
	return fmt.Sprintf("step %d (%v, %d bytes)", s.ID, s.Op, s.Len)
}

// StepError is why a call failed: the rank, the collective, the step that
// failed or the steps the rank was waiting on, and the cause (ErrDeadline,
// a context error, a transport error). Match the cause with errors.Is.
type StepError struct {
	Rank       int
	Collective coll.Collective
	Algorithm  string
	// Steps lists the failed step, or the steps in flight when the call
	// stopped (at most maxListed of them; More counts the rest).
	Steps []StepInfo
	More  int
	// Waited is how long the call ran before a deadline stopped it.
	Waited time.Duration
	Err    error
}

// maxListed bounds how many waited-on steps an error names.
const maxListed = 4

func (e *StepError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "exec: rank %d %s", e.Rank, e.Collective)
	if e.Algorithm != "" {
		fmt.Fprintf(&b, "/%s", e.Algorithm)
	}
	if errors.Is(e.Err, ErrDeadline) {
		fmt.Fprintf(&b, ": %v after %v", e.Err, e.Waited.Round(time.Millisecond))
		if len(e.Steps) > 0 {
			b.WriteString(" waiting on ")
		}
	} else {
		b.WriteString(": ")
	}
	for i, s := range e.Steps {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.String())
	}
	if e.More > 0 {
		fmt.Fprintf(&b, " and %d more", e.More)
	}
	if !errors.Is(e.Err, ErrDeadline) {
		if len(e.Steps) > 0 {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *StepError) Unwrap() error { return e.Err }

func (m *Machine) info(id int) StepInfo {
	s := &m.prog.Steps[id]
	return StepInfo{ID: id, Op: s.Op, Peer: int(s.Peer), Tag: int(s.Tag), Len: s.Len}
}

func (m *Machine) newErr(cause error) *StepError {
	return &StepError{Rank: m.prog.Rank, Collective: m.cfg.Collective, Algorithm: m.cfg.Algorithm, Err: cause}
}

// failStep is the error of one failed step.
func (m *Machine) failStep(id int, cause error) error {
	e := m.newErr(cause)
	e.Steps = []StepInfo{m.info(id)}
	return e
}

// Waiting lists the steps in flight (posted and not completed), in id
// order, at most max of them, and how many more there are.
func (m *Machine) Waiting(max int) (steps []StepInfo, more int) {
	for id, st := range m.state {
		if st != stInFlight {
			continue
		}
		if len(steps) < max {
			steps = append(steps, m.info(id))
		} else {
			more++
		}
	}
	return steps, more
}

// stall is the error of a call that stopped while waiting.
func (m *Machine) stall(cause error, waited time.Duration) error {
	e := m.newErr(cause)
	e.Steps, e.More = m.Waiting(maxListed)
	e.Waited = waited
	return e
}
