package fakedev

import (
	"fmt"

	"github.com/goring-hpc/goring/mpath"
	"github.com/goring-hpc/goring/sched"
)

// Planner is cudaexec.Planner for the fake engine: how a transfer of n
// bytes to peer is carried (nil: one copy).
type Planner func(peer int, n int64, path sched.Path) *mpath.Plan

// SetPlanner makes Start carry transfers as p says, the way the CUDA
// engine runs an mpath.Plan: every op is a copy between the source, a
// staging buffer of (peer, path) kept for reuse, and the destination. The
// ops run at random among those whose stream predecessor and waits have
// finished, a few per Done poll, so a plan that let a second hop overtake
// its first hop, rewrote a slot before it drained or lost a chunk leaves
// wrong bytes at the receiver. A staging buffer serves one transfer at a
// time, in the order they started, as the CUDA engine's drained event
// orders them.
func (e *Engine) SetPlanner(p Planner) { e.planner = p }

type stageKey struct {
	peer int
	path string
}

// fakeStage is one (peer, path) staging buffer and the tickets waiting
// for it, oldest (the one using it) first.
type fakeStage struct {
	b     []byte
	queue []uint64
}

// planRun is a plan in flight: which ops have run, and each staged path's
// staging buffer.
type planRun struct {
	p      *mpath.Plan
	done   []bool
	left   int
	stages []*fakeStage // per Plan.Paths entry; nil for the direct path
}

func (e *Engine) plan(peer int, n int64, path sched.Path) *mpath.Plan {
	if e.planner == nil {
		return nil
	}
	p := e.planner(peer, n, path)
	if p == nil || len(p.Paths) == 0 || p.Bytes != n || (len(p.Paths) == 1 && !p.Paths[0].Path.Staged) {
		return nil
	}
	return p
}

func (e *Engine) startPlan(ticket uint64, peer int, p *mpath.Plan) *planRun {
	r := &planRun{p: p, done: make([]bool, len(p.Ops)), left: len(p.Ops), stages: make([]*fakeStage, len(p.Paths))}
	for i, pp := range p.Paths {
		if !pp.Path.Staged {
			continue
		}
		k := stageKey{peer, pp.Path.Name}
		st := e.stages[k]
		if st == nil {
			st = &fakeStage{}
			e.stages[k] = st
		}
		if need := pp.StageBytes(); int64(len(st.b)) < need && len(st.queue) == 0 {
			st.b = make([]byte, need)
		}
		st.queue = append(st.queue, ticket)
		r.stages[i] = st
	}
	return r
}

// ready reports whether op i of r may run: the ops before it on its
// stream and those it waits for have run, and (unless force) its staging
// buffer is this transfer's turn; the buffer is grown to the plan's need
// then.
func (r *planRun) ready(ticket uint64, i int, force bool) bool {
	op := r.p.Ops[i]
	for j := i - 1; j >= 0; j-- {
		if r.p.Ops[j].Stream == op.Stream && !r.done[j] {
			return false
		}
	}
	for _, w := range op.Waits {
		if !r.done[w] {
			return false
		}
	}
	if st := r.stages[op.Path]; st != nil {
		if !force && st.queue[0] != ticket {
			return false
		}
		if need := r.p.Paths[op.Path].StageBytes(); int64(len(st.b)) < need {
			st.b = make([]byte, need) // nobody else holds it now
		}
	}
	return true
}

// stepPlan runs some ready ops of ticket's plan (all of them, in a valid
// order, when all is set: Finish, the failure path, which does not wait
// for the staging buffer's turn) and reports whether the transfer is
// complete.
func (e *Engine) stepPlan(ticket uint64, c fakeCopy, all bool) (bool, error) {
	r := c.plan
	for progress := true; progress && r.left > 0; {
		progress = false
		for i := range r.p.Ops {
			if r.done[i] || !r.ready(ticket, i, all) || (!all && e.rng.IntN(2) == 0) {
				continue
			}
			if err := e.runOp(c, r, i); err != nil {
				delete(e.copies, ticket)
				r.release(ticket)
				return false, err
			}
			progress = true
		}
		if !all {
			break
		}
	}
	if r.left > 0 {
		if all {
			return false, fmt.Errorf("fakedev: plan of ticket %d cannot finish (waits never met)", ticket)
		}
		return false, nil
	}
	delete(e.copies, ticket)
	r.release(ticket)
	return true, nil
}

// runOp moves op i's bytes.
func (e *Engine) runOp(c fakeCopy, r *planRun, i int) error {
	op := r.p.Ops[i]
	e.a.mu.Lock()
	defer e.a.mu.Unlock()
	buf := func(b mpath.Buf) ([]byte, error) {
		switch b {
		case mpath.Src:
			return e.a.bytes(c.src)
		case mpath.Dst:
			return e.a.bytes(c.dst)
		}
		return r.stages[op.Path].b, nil
	}
	from, err := buf(op.From)
	if err != nil {
		return err
	}
	to, err := buf(op.To)
	if err != nil {
		return err
	}
	if op.FromOff < 0 || op.ToOff < 0 || op.FromOff+op.N > int64(len(from)) || op.ToOff+op.N > int64(len(to)) {
		return fmt.Errorf("fakedev: plan op %d (%d bytes at %d -> %d) runs off its buffers", i, op.N, op.FromOff, op.ToOff)
	}
	copy(to[op.ToOff:op.ToOff+op.N], from[op.FromOff:op.FromOff+op.N])
	r.done[i] = true
	r.left--
	return nil
}

// release hands the plan's staging buffers to the next transfer.
func (r *planRun) release(ticket uint64) {
	for _, st := range r.stages {
		if st == nil {
			continue
		}
		for j, t := range st.queue {
			if t == ticket {
				st.queue = append(st.queue[:j], st.queue[j+1:]...)
				break
			}
		}
	}
}
