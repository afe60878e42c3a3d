package exec

import "time"

// The timeout policy of goring, in one place.
//
// MPI lets a rank enter a collective as late as it likes; only a failed
// peer may end one. So a call driven through the team layer has no
// deadline by default (Call.Begin with a zero deadline) and relies on a
// Watch to notice a dead peer. A deadline is an opt-in failure detector
// there (UCC_TL_GORING_TIMEOUT_MS).
//
// goring's own launcher (goring bench) watches its ranks and runs
// benchmarks, where a call that takes far longer than the bytes explain is
// a stuck peer: there every call gets TimeoutFor its size.
//
// Run, the blocking driver of tests and tools, never waits forever: a call
// given neither a deadline nor a context deadline gets DefaultTimeout.

// DefaultTimeout bounds a call when neither Run's deadline nor the context
// gives one: nothing waits forever.
const DefaultTimeout = 30 * time.Second

// TimeoutFor is the deadline of one benchmark call moving bytes through a
// rank's buffers: 10 s plus 1 s per 50 MB, generous for a slow machine yet
// short enough that a stuck peer fails the job.
func TimeoutFor(bytes int64) time.Duration {
	return 10*time.Second + time.Duration(bytes/50_000_000)*time.Second
}

// TimeoutRule is TimeoutFor in words, for help texts (goring bench
// --timeout), kept beside it so that the two change together.
const TimeoutRule = "10s + 1s per 50 MB"

// A Watch checks, while a call waits, that its peers are still alive. Check
// returns nil while they are, else an error naming the peer that failed;
// the call then fails with that error as its cause. Check is called at most
// once per Every from the goroutine that drives the call, so it may do a
// little I/O (a process table look-up) but must not block.
type Watch interface {
	Check() error
	Every() time.Duration
}

// Pace applies the policy above for a driver that waits on a call (Call,
// and package direct's protocol): a deadline (zero: none) and a Watch
// checked at most once per its Every (nil: none). Each check cuts the
// driver's next wait so that neither is seen late.
type Pace struct {
	Start    time.Time // when the call began (Begin)
	Deadline time.Time
	Watch    Watch
	checked  time.Time
}

// Begin starts the call's clock at now.
func (p *Pace) Begin(now time.Time) { p.Start, p.checked = now, now }

// CheckDeadline returns ErrDeadline once now has passed the deadline, and
// otherwise cuts *wait to it.
func (p *Pace) CheckDeadline(now time.Time, wait *time.Time) error {
	if p.Deadline.IsZero() {
		return nil
	}
	if !now.Before(p.Deadline) {
		return ErrDeadline
	}
	if wait.After(p.Deadline) {
		*wait = p.Deadline
	}
	return nil
}

// Check is CheckDeadline, then CheckWatch: what a driver asks before it
// waits, so that neither the deadline nor a dead peer is seen late.
func (p *Pace) Check(now time.Time, wait *time.Time) error {
	if err := p.CheckDeadline(now, wait); err != nil {
		return err
	}
	return p.CheckWatch(now, wait)
}

// CheckWatch runs the Watch when a check is due, returning its error, and
// cuts *wait to the next check.
func (p *Pace) CheckWatch(now time.Time, wait *time.Time) error {
	if p.Watch == nil {
		return nil
	}
	next := p.checked.Add(p.Watch.Every())
	if !now.Before(next) {
		p.checked = now
		if err := p.Watch.Check(); err != nil {
			return err
		}
		next = now.Add(p.Watch.Every())
	}
	if wait.After(next) {
		*wait = next
	}
	return nil
}
