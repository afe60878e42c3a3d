package exec

import (
	"fmt"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
)

// LocalStep is one step of a LocalRun, over regions the executor can
// address: for every element, Srcs reduced in order (a copy has one
// source) and written to every region of Dsts. A pairwise step has one
// destination and one source and, for a reduction, Dsts[0] is also its
// first operand (Dst op= Src, as LocalOp); a fused step (more than one
// source or destination) runs as one MultiOp and reads exactly its
// sources. Deps are the indices of earlier steps that must have finished
// first; steps are listed in an order that respects them, so an executor
// that runs steps in the order started needs no waiting between them.
type LocalStep struct {
	Kind       sched.StepOp // sched.OpCopy or sched.OpReduce
	Dsts, Srcs []Region
	Deps       []int
}

// Fused reports whether s runs as one MultiOp.
func (s *LocalStep) Fused() bool { return len(s.Dsts) > 1 || len(s.Srcs) > 1 }

// InOrder is what a LocalExecutor implements to say that the steps it is
// given run in the order given (one GPU stream): a LocalRun then starts
// all its steps at once instead of waiting for each one's dependencies.
type InOrder interface{ InOrder() bool }

// LocalRun runs a list of local steps with dependencies on a
// LocalExecutor, for a caller that does its own messaging (package
// direct's device backend, where one process runs every rank's copies
// and reductions): the steps a Machine would run for a program, but over
// any regions, and fused where the executor runs MultiOps. It is driven
// from the caller's loop as Call drives a Machine: Start what is ready,
// Poll an AsyncLocal (or feed Step the completions the transport's Wait
// reports), Cancel what is left when the call ends early. Step i's token
// is the base given to Begin plus i.
type LocalRun struct {
	local   LocalExecutor
	steps   []LocalStep
	base    uint64
	dtype   coll.Dtype
	op      coll.Op
	started []bool
	done    []bool
	nDone   int
	comps   []Completion
	multi   MultiOp // the fused step being handed over (no allocation per step)
}

// Begin prepares a run of steps on local with tokens base+i (base's low
// 24 bits clear), reductions for (d, o). Nothing starts before Start.
func (l *LocalRun) Begin(local LocalExecutor, steps []LocalStep, base uint64, d coll.Dtype, o coll.Op) {
	*l = LocalRun{local: local, steps: steps, base: base, dtype: d, op: o, comps: l.comps[:0],
		started: resize(l.started, len(steps)), done: resize(l.done, len(steps))}
}

func resize(b []bool, n int) []bool {
	if cap(b) < n {
		return make([]bool, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// Done reports whether every step has finished.
func (l *LocalRun) Done() bool { return l.nDone == len(l.steps) }

// Token is step i's token.
func (l *LocalRun) Token(i int) uint64 { return l.base | uint64(i) }

// Start hands the executor every step it may run now: all of them for an
// in-order executor, else those whose dependencies have finished. It
// reports whether it started any.
func (l *LocalRun) Start() (bool, error) {
	inOrder := false
	if o, ok := l.local.(InOrder); ok {
		inOrder = o.InOrder()
	}
	any := false
	for i := range l.steps {
		if l.started[i] || (!inOrder && !l.ready(i)) {
			continue
		}
		any = true
		s := &l.steps[i]
		l.started[i] = true
		done, err := l.launch(i, s)
		if err != nil {
			return any, fmt.Errorf("%s %d of %d: %w", stepName(s.Kind), i, len(l.steps), err)
		}
		if done {
			l.done[i] = true
			l.nDone++
		}
	}
	return any, nil
}

// launch hands step i to the executor: a fused one as one MultiOp.
func (l *LocalRun) launch(i int, s *LocalStep) (bool, error) {
	if s.Fused() {
		ml, ok := l.local.(MultiLocal)
		if !ok {
			return true, fmt.Errorf("the executor runs no fused steps")
		}
		l.multi = MultiOp{Token: l.Token(i), Kind: s.Kind, Dsts: s.Dsts, Srcs: s.Srcs, Dtype: l.dtype, Op: l.op}
		return ml.LocalMulti(&l.multi)
	}
	lop := LocalOp{Step: i, Token: l.Token(i), Kind: s.Kind, Dst: s.Dsts[0], Src: s.Srcs[0], Dtype: l.dtype, Op: l.op}
	return l.local.Local(&lop)
}

func (l *LocalRun) ready(i int) bool {
	for _, d := range l.steps[i].Deps {
		if !l.done[d] {
			return false
		}
	}
	return true
}

func stepName(k sched.StepOp) string {
	if k == sched.OpReduce {
		return "reduction"
	}
	return "copy"
}

// Mine reports whether tok is one of this run's steps' tokens.
func (l *LocalRun) Mine(tok uint64) bool { return tok&^0xffffff == l.base }

// Step feeds one step's completion (a token of the run: Mine); a step
// that failed fails the run.
func (l *LocalRun) Step(c Completion) error {
	i := int(c.Token & 0xffffff)
	if i >= len(l.steps) || l.done[i] {
		return nil
	}
	l.done[i] = true
	if c.Err != nil {
		return fmt.Errorf("%s %d of %d: %w", stepName(l.steps[i].Kind), i, len(l.steps), c.Err)
	}
	l.nDone++
	return nil
}

// Poll is the device's turn in the caller's loop, as in Call: the steps
// an AsyncLocal finished go to Step (stepped: look for newly ready
// steps before waiting), else the caller's wait is cut to the executor's
// poll interval.
func (l *LocalRun) Poll(now time.Time, wait *time.Time) (stepped bool, err error) {
	async, _ := l.local.(AsyncLocal)
	if async == nil {
		return false, nil
	}
	return pollLocal(async, l, l.comps[:0], now, wait)
}

// Cancel withdraws the steps started and not finished (the executor's
// Cancel returns once a step no longer touches its buffers) and marks
// them done; it returns what the cancellations said.
func (l *LocalRun) Cancel() []error {
	async, ok := l.local.(AsyncLocal)
	if !ok {
		return nil
	}
	var errs []error
	for i := range l.steps {
		if l.started[i] && !l.done[i] {
			errs = append(errs, async.Cancel(l.Token(i)))
			l.done[i] = true
		}
	}
	return errs
}

// stepper takes a local step's completion: a Machine, a LocalRun.
type stepper interface{ Step(Completion) error }

// pollLocal feeds s the steps a finished (into comps' storage) while it
// has work pending; when none finished it cuts *wait to a's poll
// interval, so that a finished step is seen that soon.
func pollLocal(a AsyncLocal, s stepper, comps []Completion, now time.Time, wait *time.Time) (stepped bool, err error) {
	if a.Pending() == 0 {
		return false, nil
	}
	comps = a.Poll(comps)
	for _, comp := range comps {
		if err := s.Step(comp); err != nil {
			return false, err
		}
	}
	if len(comps) > 0 {
		return true, nil
	}
	if next := now.Add(PollIntervalOf(a)); wait.After(next) {
		*wait = next
	}
	return false, nil
}
