package team

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/ucx"
)

// The sched program's messages on one Machine: the runner every call can
// fall back to, and the one most calls run. An alltoallv whose algorithm
// needs every rank's counts runs their exchange on it first
// (alltoallv.go).

// machineRunner drives one Machine over the team's transport.
type machineRunner struct {
	c    *Coll
	m    *exec.Machine // nil until an alltoallv's exchange has planned it
	call exec.Call
	xchg *a2aExchange // alltoallv's count exchange (MoE's routing check), before m runs; nil: none
}

// newMachineRunner plans the call (its algorithm, else the fallback where
// that does not serve the shape) and builds its executor over the
// caller's buffers.
func newMachineRunner(k *Call) (Runner, error) {
	c := k.coll
	entry, bufs, err := c.planned(k)
	if err != nil {
		return nil, err
	}
	c.entry = entry
	m, err := c.build(entry, entry.program(c.team.rank), bufs, k.Args)
	if err != nil {
		return nil, err
	}
	return &machineRunner{c: c, m: m}, nil
}

// planned finds or builds the call's plan and maps the caller's buffers
// onto its program; the call runs the plan's algorithm from now on.
func (c *Coll) planned(k *Call) (*planEntry, exec.Buffers, error) {
	t := c.team
	a, mem, B := k.Args, k.mem, k.bytes
	entry, err := t.planFor(a, k.alg, k.fallback, B, mem, t.deviceChunks(a, B, mem))
	if err != nil {
		return nil, exec.Buffers{}, err
	}
	c.alg = entry.plan.Algorithm
	bufs, err := c.buffers(a, mem, entry.plan.Ranks[t.rank].Sizes, B)
	if err != nil {
		return nil, exec.Buffers{}, err
	}
	return entry, bufs, nil
}

func (r *machineRunner) Begin() error {
	if err := r.c.copyInput(); err != nil {
		return err
	}
	tr, watch, deadline := r.c.team.nextCall()
	r.call.SetWatch(watch)
	m := r.m
	if r.xchg != nil && r.m == nil {
		// The exchange first (alltoallv's counts, an MoE call's routing
		// check); a reposted call has its executor already, on every rank
		// alike.
		r.xchg.active, m = true, r.xchg.m
	}
	return r.call.Begin(m, tr, deadline)
}

func (r *machineRunner) Progress() (bool, error) {
	done, err := r.call.Progress(time.Time{})
	if err == nil && done && r.xchg != nil && r.xchg.active {
		if err = r.exchanged(); err == nil {
			done, err = r.call.Progress(time.Time{})
		}
	}
	return done, err
}

func (r *machineRunner) Abort(cause error) error { return r.call.Abort(cause) }

// exchanged builds the executor of a call whose exchange has completed
// (an alltoallv's plan from the counts; an MoE call's, once the ranks
// agree) and puts it on the wire as the team's next call.
func (r *machineRunner) exchanged() error {
	r.xchg.active = false
	m, err := r.xchg.then()
	if err != nil {
		return err
	}
	r.m = m
	tr, _, deadline := r.c.team.nextCall()
	return r.call.Begin(r.m, tr, deadline)
}

// planFor finds or builds the plan of alg (else fallback, where alg does
// not serve the shape) for B bytes, its transfers in chunks pieces (0 or
// 1: whole).
func (t *Team) planFor(a Args, alg, fallback string, B int64, mem exec.Mem, chunks int) (*planEntry, error) {
	spec := sched.Spec{Collective: a.Coll, Algorithm: alg, Topo: t.topo, Bytes: B, DtypeBytes: a.Dtype.Size(), Root: a.Root, Chunks: chunks}
	entry, err := t.plans.get(spec, t.rank, a.Dtype, a.Op, mem)
	if sched.IsUnsupported(err) && fallback != "" {
		spec.Algorithm = fallback
		entry, err = t.plans.get(spec, t.rank, a.Dtype, a.Op, mem)
	}
	if err != nil {
		if sched.IsUnsupported(err) {
			return nil, notSupportedErr{err}
		}
		return nil, invalidErr{err}
	}
	return entry, nil
}

// build makes an executor for prog (of entry's plan) over bufs: an idle
// one of the entry's pool if there is one, else a new one with scratch of
// its own. c owns it (c.pm) once built.
func (c *Coll) build(entry *planEntry, prog *sched.RankProgram, bufs exec.Buffers, a Args) (*exec.Machine, error) {
	if pm := entry.take(); pm != nil {
		// A finished call's executor: only the buffers change (its
		// scratch stays).
		if err := pm.m.SetBuffers(bufs); err != nil {
			pm.free()
			return nil, invalidErr{err}
		}
		c.pm = pm
		return pm.m, nil
	}
	pm := &pooledMachine{gpu: c.gpu}
	if z := prog.Sizes.Scratch; z > 0 && c.gpu == nil {
		pm.scratch = ucx.Alloc(int(z))
		bufs.Scratch = exec.HostRegion(pm.scratch)
	}
	dtype, op := a.Coll.Reduction(a.Dtype, a.Op)
	cfg := exec.ConfigFor(entry.plan, dtype, op)
	var err error
	if c.gpu != nil {
		if pm.devScratch, err = c.gpu.g.Alloc(prog.Sizes.Scratch); err != nil {
			pm.free()
			return nil, resourceErr{err}
		}
		bufs.Scratch = pm.devScratch
		cfg.Local = c.gpu.local
	}
	if pm.m, err = exec.New(prog, bufs, cfg); err != nil {
		pm.free()
		return nil, invalidErr{err}
	}
	c.pm = pm
	return pm.m, nil
}

// buffers maps UCC's buffers onto the program's src and dst (scratch is
// the executor's), as place has them; where the input is in dst, the
// program reads a private copy of it.
func (c *Coll) buffers(a Args, mem exec.Mem, z sched.Sizes, B int64) (exec.Buffers, error) {
	if a.Dst == nil || (!a.InPlace && a.Coll != coll.Bcast && a.Src == nil) || (a.Coll == coll.Bcast && a.Src == nil && a.Dst == nil) {
		return exec.Buffers{}, Invalid("%s: missing buffer", a.Coll)
	}
	var b exec.Buffers
	view := func(p unsafe.Pointer, n int64) exec.Region { return c.view(mem, p, n) }
	whole, dst := place(a, c.team.rank, B, z.Src, z.Dst, view)
	b.Src, b.Dst = whole, dst
	if !inputInDst(a) {
		return b, c.alignForReduction(a, mem, &b)
	}
	src, err := c.privateRegion(mem, z.Src)
	if err != nil {
		return b, err
	}
	b.Src = src
	c.input = privateCopy{from: whole, to: b.Src}
	return b, c.alignForReduction(a, mem, &b) // the private input is aligned; the output may not be
}

// privateRegion is n bytes of the call's own in mem (aligned), freed at
// finalize.
func (c *Coll) privateRegion(mem exec.Mem, n int64) (exec.Region, error) {
	if mem.IsHost() {
		return exec.HostRegion(c.alloc(n)), nil
	}
	r, err := c.gpu.g.Alloc(n)
	if err != nil {
		return exec.Region{}, resourceErr{err}
	}
	c.devOwn = append(c.devOwn, r)
	return r, nil
}

// privateCopy is a copy between the caller's buffer and a private one
// of the call's: from to to, made when the call needs it, never before.
// An in-place call's input (and a misaligned input: aligned.go) is
// copied in at every post: the caller may write its buffer between
// making a call and posting it (a triggered call's input is written by
// work queued ahead of it on the caller's stream; a persistent call is
// made once and posted again with new data). A misaligned output is
// copied out when the call completes.
type privateCopy struct{ from, to exec.Region }

// copyInput takes the call's private copy of its input, if it has one:
// a runner's Begin does, first.
func (c *Coll) copyInput() error { return c.take(c.input, "the private copy of a call's input") }

// take makes p, if the call has one (what names it in an error).
func (c *Coll) take(p privateCopy, what string) error {
	if p.to.Len() == 0 {
		return nil
	}
	if !p.to.Mem().IsHost() {
		if err := c.gpu.local.CopyNow(p.to, p.from); err != nil {
			return resourceErr{fmt.Errorf("%s: %w", what, err)}
		}
		return nil
	}
	copy(p.to.Bytes(), p.from.Bytes())
	return nil
}
