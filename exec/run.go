package exec

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultTimeout bounds a call when neither Run's deadline nor the context
// gives one: nothing waits forever.
const DefaultTimeout = 30 * time.Second

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
	start := time.Now()
	if deadline.IsZero() {
		if d, ok := ctx.Deadline(); ok {
			deadline = d
		} else {
			deadline = start.Add(DefaultTimeout)
		}
	}
	// Post first, compute after: a send that becomes ready is handed to
	// the transport before this rank spends time on a copy or reduction,
	// so that the peer can move its bytes meanwhile (a UCX rendezvous
	// receiver pulls them from the sender as soon as it sees the request).
	// Local steps therefore run one at a time between posts.
	m.deferLocal = true
	defer func() { m.deferLocal = false }()
	if err := m.Start(); err != nil {
		return err
	}
	cancellable := ctx.Done() != nil
	for {
		r := m.Ready()
		for i := range r.Recvs {
			p := &r.Recvs[i]
			if err := t.PostRecv(p.Peer, p.Tag, p.Buf, p.Token); err != nil {
				return abort(m, t, m.failStep(p.Step, fmt.Errorf("post: %w", err)))
			}
		}
		for i := range r.Sends {
			p := &r.Sends[i]
			if err := t.PostSend(p.Peer, p.Tag, p.Buf, p.Token); err != nil {
				return abort(m, t, m.failStep(p.Step, fmt.Errorf("post: %w", err)))
			}
		}
		ran, err := m.RunLocal()
		if err != nil {
			return abort(m, t, err)
		}
		if ran {
			continue
		}
		if m.Done() {
			return nil
		}
		now := time.Now()
		if err := ctx.Err(); err != nil {
			return abort(m, t, m.stall(err, now.Sub(start)))
		}
		if !now.Before(deadline) {
			return abort(m, t, m.stall(ErrDeadline, now.Sub(start)))
		}
		wait := deadline
		if cancellable && wait.Sub(now) > pollSlice {
			wait = now.Add(pollSlice)
		}
		comps, err := t.Wait(wait, m.comps[:0])
		if err != nil {
			return abort(m, t, m.stall(fmt.Errorf("transport: %w", err), time.Since(start)))
		}
		for _, c := range comps {
			if err := m.Step(c); err != nil {
				return abort(m, t, err)
			}
		}
	}
}

// abort cancels what is in flight and returns err (with any cancel
// failure joined to it).
func abort(m *Machine, t Transport, err error) error {
	var cerrs []error
	for id, st := range m.state {
		if st == stInFlight {
			if cerr := t.Cancel(m.Token(id)); cerr != nil {
				cerrs = append(cerrs, cerr)
			}
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
