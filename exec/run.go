package exec

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/goring-hpc/goring/sched"
)

// pollSlice bounds one Wait when the context can be cancelled, so that a
// cancellation is seen within this time even if the transport sleeps.
const pollSlice = 50 * time.Millisecond

// Run drives m over t for one call: Start, then post what is ready, wait
// for completions and feed them back until every step is done.
//
// The call fails when deadline passes (a zero deadline means the context's
// deadline, or DefaultTimeout from now), when ctx is cancelled, when a
// post or the transport fails, or when an operation completes with an
// error. The error is a *StepError naming the rank, the collective and the
// step(s) concerned. Before returning an error Run cancels every operation
// still in flight, so the buffers are free again.
//
// In steady state (the Machine and the transport warmed up by an earlier
// call) Run allocates nothing.
func Run(ctx context.Context, m *Machine, t Transport, deadline time.Time) error {
	if deadline.IsZero() {
		if d, ok := ctx.Deadline(); ok {
			deadline = d
		} else {
			deadline = time.Now().Add(DefaultTimeout)
		}
	}
	var c Call
	if err := c.Begin(m, t, deadline); err != nil {
		return err
	}
	return drive(ctx, c.Progress, c.Abort, deadline)
}

// A Progressor is a begun call that is driven without blocking: a Call,
// or a protocol driven like one (package direct's).
type Progressor interface {
	// Progress advances the call, waiting for completions until wait at
	// most; done once it has completed, an error once it failed.
	Progress(wait time.Time) (done bool, err error)
	// Abort ends the unfinished call because of cause.
	Abort(cause error) error
}

// Drive progresses a begun call until it is done or fails, waiting at
// most until deadline (which the call enforces: see Call.Begin) and
// seeing ctx's cancellation within pollSlice, on which it aborts the
// call.
func Drive(ctx context.Context, p Progressor, deadline time.Time) error {
	return drive(ctx, p.Progress, p.Abort, deadline)
}

// drive is Drive over the call's two methods: Run passes its Call's, which
// then stays on Run's stack (an interface would move it to the heap, one
// allocation per call).
func drive(ctx context.Context, progress func(time.Time) (bool, error), end func(error) error, deadline time.Time) error {
	cancellable := ctx.Done() != nil
	for {
		wait := deadline
		if now := time.Now(); cancellable && wait.Sub(now) > pollSlice {
			wait = now.Add(pollSlice)
		}
		done, err := progress(wait)
		if err != nil || done {
			return err
		}
		if err := ctx.Err(); err != nil {
			return end(err)
		}
	}
}

// Call is one call of a Machine over a Transport driven from outside, for
// callers that must not block: a UCC team layer's progress function, say,
// calls Progress with a zero wait each time it is polled. Run is a loop
// over the same two methods. A Call is a value; reusing one for the next
// call allocates nothing.
type Call struct {
	m    *Machine
	t    Transport
	pace Pace // deadline (zero: none) and watch
	done bool
	err  error
}

// Begin starts the call (Machine.Start) with a deadline (zero: none, the
// call waits for its peers as long as they live; see Watch); nothing is
// posted until the first Progress.
//
// Post first, compute after: a send that becomes ready is handed to the
// transport before this rank spends time on a copy or reduction, so that
// the peer can move its bytes meanwhile (a UCX rendezvous receiver pulls
// them from the sender as soon as it sees the request). Local steps
// therefore run one at a time between posts.
func (c *Call) Begin(m *Machine, t Transport, deadline time.Time) error {
	*c = Call{m: m, t: t, pace: Pace{Deadline: deadline, Watch: c.pace.Watch}}
	c.pace.Begin(time.Now())
	m.deferLocal = true
	if err := m.Start(); err != nil {
		m.deferLocal = false
		c.err = err
		return err
	}
	return nil
}

// Progress posts what is ready, runs local steps, and feeds completions
// back until the call is done or no completion arrives by wait (a zero or
// past wait polls the transport once). It returns done once every step has
// completed, and an error (after cancelling what is in flight) when the
// deadline passes or the Watch finds a dead peer while the transport has
// nothing more for the call, or anything fails; later calls return the
// same result.
func (c *Call) Progress(wait time.Time) (done bool, err error) {
	if c.done || c.err != nil {
		return c.done, c.err
	}
	m, t := c.m, c.t
	for {
		r := m.Ready()
		for i := range r.Recvs {
			p := &r.Recvs[i]
			if err := t.PostRecv(p); err != nil {
				return false, c.fail(m.failStep(p.Step, fmt.Errorf("post: %w", err)))
			}
		}
		for i := range r.Sends {
			p := &r.Sends[i]
			if err := t.PostSend(p); err != nil {
				return false, c.fail(m.failStep(p.Step, fmt.Errorf("post: %w", err)))
			}
		}
		ran, err := m.RunLocal()
		if err != nil {
			return false, c.fail(err)
		}
		if ran {
			continue
		}
		if m.Done() {
			c.done = true
			m.deferLocal = false
			return true, nil
		}
		now := time.Now()
		cause := c.pace.CheckDeadline(now, &wait)
		if cause == nil {
			stepped, err := c.pollDevice(now, &wait)
			if err != nil {
				return false, c.fail(err)
			}
			if stepped {
				continue
			}
			cause = c.pace.CheckWatch(now, &wait)
		}
		if cause != nil {
			// The deadline passed or a peer left, but this rank may
			// only be late to look (an application computing between
			// polls): what its peers completed meanwhile is taken
			// first, and the call fails only once nothing more came.
			stepped, err := c.pollDevice(now, &wait)
			if err == nil && !stepped {
				stepped, err = c.take(time.Time{})
			}
			if err != nil {
				return false, c.fail(err)
			}
			if stepped {
				continue
			}
			return false, c.fail(m.stall(cause, now.Sub(c.pace.Start)))
		}
		stepped, err := c.take(wait)
		if err != nil {
			return false, c.fail(err)
		}
		if !stepped {
			return false, nil
		}
	}
}

// take waits for the transport's completions until wait (a zero or past
// wait polls it once) and feeds them to the Machine; stepped reports
// whether any came. The error is the transport's, or a failed step's.
func (c *Call) take(wait time.Time) (stepped bool, err error) {
	m := c.m
	comps, err := c.t.Wait(wait, m.comps[:0])
	if err != nil {
		return false, m.stall(fmt.Errorf("transport: %w", err), time.Since(c.pace.Start))
	}
	for _, comp := range comps {
		if err := m.Step(comp); err != nil {
			return false, err
		}
	}
	return len(comps) > 0, nil
}

// pollDevice is the device's turn in Progress: while an AsyncLocal has
// work on the GPU, the steps that finished are fed to the Machine
// (stepped: the caller looks for newly ready steps before waiting), else
// the network wait is cut to the executor's poll interval (PollEvery, or
// its PollInterval) so a finished step is seen that soon.
func (c *Call) pollDevice(now time.Time, wait *time.Time) (stepped bool, err error) {
	async, _ := c.m.local.(AsyncLocal)
	if async == nil {
		return false, nil
	}
	return pollLocal(async, c.m, c.m.comps[:0], now, wait)
}

// SetWatch makes every later call of c check its peers with w while it
// waits (nil: no checks). It survives Begin, so a pooled Call keeps it.
func (c *Call) SetWatch(w Watch) { c.pace.Watch = w }

// Abort ends an unfinished call because of cause (a cancelled context, a
// caller giving up): it cancels what is in flight and returns the error
// naming the steps still waiting.
func (c *Call) Abort(cause error) error {
	if c.done || c.err != nil {
		return c.err
	}
	return c.fail(c.m.stall(cause, time.Since(c.pace.Start)))
}

func (c *Call) fail(err error) error {
	c.err = abort(c.m, c.t, err)
	c.m.deferLocal = false
	return c.err
}

// abort cancels what is in flight and returns err (with any cancel
// failure joined to it).
func abort(m *Machine, t Transport, err error) error {
	var cerrs []error
	async, _ := m.local.(AsyncLocal)
	for id, st := range m.state {
		if st != stInFlight {
			continue
		}
		var cerr error
		if op := m.prog.Steps[id].Op; async != nil && op != sched.OpSend && op != sched.OpRecv {
			cerr = async.Cancel(m.Token(id))
		} else {
			cerr = t.Cancel(m.Token(id))
		}
		if cerr != nil {
			cerrs = append(cerrs, cerr)
		}
	}
	if m.err == nil {
		m.err = err
	}
	if len(cerrs) > 0 {
		return errors.Join(append([]error{err}, cerrs...)...)
	}
	return err
}
