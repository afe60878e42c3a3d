package fakedev

import (
	"fmt"

	"math/rand/v2"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/reduce"
	"github.com/goring-hpc/goring/sched"
)

// Local is the fake device's exec.AsyncLocal: Local only queues a step;
// each Poll runs a random, non-empty part of the queue (in random order)
// and reports those steps done. Steps the Machine starts together are
// independent by the program's rules, so any order is one a device could
// show; a driver that fed a step's dependents before its completion would
// read bytes not yet written and fail a contents test.
type Local struct {
	arena *Arena
	rng   *rand.Rand
	queue []exec.LocalOp
	// Started counts the steps handed to Local, for tests.
	Started int
}

var _ exec.AsyncLocal = (*Local)(nil)

// Local implements exec.LocalExecutor: it checks the op and queues it.
func (l *Local) Local(op *exec.LocalOp) (bool, error) {
	if op.Dst.Mem().Kind != exec.MemFake && !op.Dst.IsHost() {
		return true, fmt.Errorf("fakedev: cannot write %v memory", op.Dst.Mem())
	}
	if op.Kind == sched.OpReduce {
		if _, err := reduce.Kernel(op.Dtype, op.Op); err != nil {
			return true, err
		}
	}
	l.queue = append(l.queue, *op)
	l.Started++
	return false, nil
}

// Pending implements exec.AsyncLocal.
func (l *Local) Pending() int { return len(l.queue) }

// Poll implements exec.AsyncLocal.
func (l *Local) Poll(dst []exec.Completion) []exec.Completion {
	if len(l.queue) == 0 {
		return dst
	}
	l.rng.Shuffle(len(l.queue), func(i, j int) { l.queue[i], l.queue[j] = l.queue[j], l.queue[i] })
	n := 1 + l.rng.IntN(len(l.queue))
	for _, op := range l.queue[:n] {
		dst = append(dst, exec.Completion{Token: op.Token, Len: op.Dst.Len(), Err: l.run(&op)})
	}
	l.queue = append(l.queue[:0], l.queue[n:]...)
	return dst
}

// run performs one copy or reduction in the arena.
func (l *Local) run(op *exec.LocalOp) error {
	a := l.arena
	a.mu.Lock()
	defer a.mu.Unlock()
	d, err := a.view(op.Dst)
	if err != nil {
		return err
	}
	s, err := a.view(op.Src)
	if err != nil {
		return err
	}
	if op.Kind == sched.OpCopy {
		copy(d, s)
		return nil
	}
	f, err := reduce.Kernel(op.Dtype, op.Op)
	if err != nil {
		return err
	}
	f(d, s)
	return nil
}

// Cancel implements exec.AsyncLocal: a queued step is dropped unrun.
func (l *Local) Cancel(token uint64) error {
	for i, op := range l.queue {
		if op.Token == token {
			l.queue = append(l.queue[:i], l.queue[i+1:]...)
			return nil
		}
	}
	return nil
}
