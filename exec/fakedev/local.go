package fakedev

import (
	"fmt"

	"math/rand/v2"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/reduce"
	"github.com/goring-hpc/goring/sched"
)

// Local is the fake device's exec.AsyncLocal: Local only queues a step
// (LocalMulti a multi step, LocalBatch a batch of copies or of
// reductions: each one unit);
// each Poll runs a random, non-empty part of the queue (in random order)
// and reports those steps done. Steps the Machine starts together are
// independent by the program's rules, so any order is one a device could
// show; a driver that fed a step's dependents before its completion would
// read bytes not yet written and fail a contents test.
type Local struct {
	arena *Arena
	rng   *rand.Rand
	queue []queued
	// Started counts the steps handed to Local (LocalMulti's, and every
	// copy of a batch, count one each), for tests.
	Started int
	// Batches counts the batches handed to LocalBatch, for tests;
	// ReduceBatches those of them that are reductions.
	Batches, ReduceBatches int
}

var (
	_ exec.AsyncLocal  = (*Local)(nil)
	_ exec.MultiLocal  = (*Local)(nil)
	_ exec.BatchLocal  = (*Local)(nil)
	_ exec.BatchReduce = (*Local)(nil)
)

// queued is a step waiting to run: one of a LocalOp, a MultiOp and a
// batch.
type queued struct {
	op    exec.LocalOp
	multi *exec.MultiOp
	batch *batch
}

// batch is a LocalBatch's copies or reductions, run as one unit: all of
// them (in a random order) in the Poll that reports the batch's token.
type batch struct {
	token uint64
	ops   []exec.LocalOp
}

func (q *queued) token() uint64 {
	switch {
	case q.multi != nil:
		return q.multi.Token
	case q.batch != nil:
		return q.batch.token
	}
	return q.op.Token
}

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
	l.queue = append(l.queue, queued{op: *op})
	l.Started++
	return false, nil
}

// LocalMulti implements exec.MultiLocal: the op is checked and queued (a
// copy of it: the caller's slices may change after the call).
func (l *Local) LocalMulti(op *exec.MultiOp) (bool, error) {
	if len(op.Srcs) == 0 || len(op.Dsts) == 0 || len(op.Srcs) > exec.MultiMax || len(op.Dsts) > exec.MultiMax ||
		(op.Kind == sched.OpCopy && len(op.Srcs) > 1) {
		return true, fmt.Errorf("fakedev: a multi step of %d sources and %d destinations", len(op.Srcs), len(op.Dsts))
	}
	if op.Kind == sched.OpReduce {
		if _, err := reduce.Kernel(op.Dtype, op.Op); err != nil {
			return true, err
		}
	}
	m := *op
	m.Dsts, m.Srcs = append([]exec.Region(nil), op.Dsts...), append([]exec.Region(nil), op.Srcs...)
	l.queue = append(l.queue, queued{multi: &m})
	l.Started++
	return false, nil
}

// LocalBatch implements exec.BatchLocal: the steps (all copies, or all
// reductions of one dtype and op) are checked and queued as one unit, as
// the LocalOps Local would be handed (the Machine reuses b).
func (l *Local) LocalBatch(b *exec.Batch) (bool, error) {
	if len(b.Steps) == 0 {
		return true, fmt.Errorf("fakedev: an empty batch")
	}
	if b.Kind != sched.OpCopy && b.Kind != sched.OpReduce {
		return true, fmt.Errorf("fakedev: a batch of %v", b.Kind)
	}
	if b.Kind == sched.OpReduce {
		if _, err := reduce.Kernel(b.Dtype, b.Op); err != nil {
			return true, err
		}
	}
	ops := make([]exec.LocalOp, len(b.Steps))
	for i := range b.Steps {
		if s := b.Step(i); s.Op != b.Kind {
			return true, fmt.Errorf("fakedev: batch step %d: %v in a batch of %v", b.Steps[i], s.Op, b.Kind)
		}
		op := b.LocalOp(i)
		if op.Dst.Mem().Kind != exec.MemFake && !op.Dst.IsHost() {
			return true, fmt.Errorf("fakedev: cannot write %v memory", op.Dst.Mem())
		}
		ops[i] = op
	}
	l.queue = append(l.queue, queued{batch: &batch{token: b.Token, ops: ops}})
	l.Started += len(ops)
	l.Batches++
	if b.Kind == sched.OpReduce {
		l.ReduceBatches++
	}
	return false, nil
}

// BatchesReduce implements exec.BatchReduce: batches of reductions are
// run like batches of copies.
func (l *Local) BatchesReduce() bool { return true }

// Pending implements exec.AsyncLocal.
func (l *Local) Pending() int { return len(l.queue) }

// Poll implements exec.AsyncLocal.
func (l *Local) Poll(dst []exec.Completion) []exec.Completion {
	if len(l.queue) == 0 {
		return dst
	}
	l.rng.Shuffle(len(l.queue), func(i, j int) { l.queue[i], l.queue[j] = l.queue[j], l.queue[i] })
	n := 1 + l.rng.IntN(len(l.queue))
	for _, q := range l.queue[:n] {
		if q.multi != nil {
			dst = append(dst, exec.Completion{Token: q.multi.Token, Len: q.multi.Dsts[0].Len(), Err: l.runMulti(q.multi)})
			continue
		}
		if q.batch != nil {
			dst = append(dst, exec.Completion{Token: q.batch.token, Err: l.runBatch(q.batch)})
			continue
		}
		dst = append(dst, exec.Completion{Token: q.op.Token, Len: q.op.Dst.Len(), Err: l.run(&q.op)})
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

// runBatch performs a batch's steps in a random order (they are
// independent), stopping at the first that fails.
func (l *Local) runBatch(b *batch) error {
	l.rng.Shuffle(len(b.ops), func(i, j int) { b.ops[i], b.ops[j] = b.ops[j], b.ops[i] })
	for i := range b.ops {
		if err := l.run(&b.ops[i]); err != nil {
			return err
		}
	}
	return nil
}

// runMulti performs a multi step: the sources reduced in order (read
// before any destination is written, as one kernel's threads do per
// element), then the result written to every destination.
func (l *Local) runMulti(op *exec.MultiOp) error {
	a := l.arena
	a.mu.Lock()
	defer a.mu.Unlock()
	f, err := reduce.Kernel(op.Dtype, op.Op)
	if err != nil && op.Kind == sched.OpReduce {
		return err
	}
	var acc []byte
	for i, r := range op.Srcs {
		s, err := a.view(r)
		if err != nil {
			return err
		}
		if i == 0 {
			acc = append([]byte(nil), s...)
			continue
		}
		if len(s) != len(acc) {
			return fmt.Errorf("fakedev: multi step sources of %d and %d bytes", len(acc), len(s))
		}
		f(acc, s)
	}
	for _, r := range op.Dsts {
		d, err := a.view(r)
		if err != nil {
			return err
		}
		if len(d) != len(acc) {
			return fmt.Errorf("fakedev: multi step destination of %d bytes for %d", len(d), len(acc))
		}
		copy(d, acc)
	}
	return nil
}

// Cancel implements exec.AsyncLocal: a queued step (or batch) is dropped
// unrun.
func (l *Local) Cancel(token uint64) error {
	for i, op := range l.queue {
		if op.token() == token {
			l.queue = append(l.queue[:i], l.queue[i+1:]...)
			return nil
		}
	}
	return nil
}
