package team

import (
	"errors"
	"time"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/tune"
	"github.com/goring-hpc/goring/ucx"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// Args are goring_coll_args_t in Go terms. src and dst are the
// caller's memory (C memory: Go keeps no pointer to Go memory in C).
type Args struct {
	Coll    coll.Collective
	Src     unsafe.Pointer
	Dst     unsafe.Pointer
	Count   uint64
	Dtype   coll.Dtype
	Op      coll.Op
	Root    int
	InPlace bool
	Mem     MemArg
	Alg     string
	A2A     *A2AArgs // alltoallv's counts and displacements (alltoall's too)
}

type collState int

const (
	collInit collState = iota
	collQueued
	collRunning
	collDone
	collFailed
)

// Coll is one collective call of a team.
type Coll struct {
	team    *Team
	alg     string
	m       *exec.Machine
	pm      *pooledMachine // m and its scratch, back to entry when done
	entry   *planEntry
	call    exec.Call
	owned   [][]byte      // ucx.Alloc'd private copies, freed at finalize
	devOwn  []exec.Region // device private copies, freed at finalize
	gpu     *teamGPU      // nil for host memory
	state   collState
	err     error
	trivial bool          // zero elements: done at post
	lanes   *laneRun      // host buffers on several lanes (lanes.go); nil: one lane
	xchg    *a2aExchange  // alltoallv's count exchange, before m runs (alltoallv.go)
	one     *oneDeviceRun // a leader algorithm on a shared GPU (onedevice.go); nil: none
	cross   *crossRun     // by reading the peers' memory (crossmem.go); nil: none
	// pending is the call of a lazy team posted before the team connected:
	// its executor is built when the team has (finishInit); nil: built.
	pending *Args
	// node is a call by the GPUs' own kernels (node.go); nil: none.
	node         *nodeRun
	nodeChecked  time.Time // the watch's last check while its kernel runs
	nodeLaunched time.Time // when its kernel was launched
}

// NewColl plans the call and builds its executor over the caller's
// buffers. Whatever goring does not run is a notSupportedErr, so that UCC
// can hand the call to another team layer. On a lazy team not yet
// connected (lazy.go) the call is checked now and built once the team is.
func NewColl(t *Team, a Args) (_ *Coll, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tr == nil && t.link == nil {
		return nil, Invalid("team not connected")
	}
	mem, err := memoryOf(a)
	if err != nil {
		return nil, err
	}
	alg, fallback, err := t.algorithmFor(a, mem)
	if err != nil {
		return nil, err
	}
	if t.tr == nil {
		return t.pendingColl(a, alg)
	}
	c := &Coll{team: t, alg: alg}
	if err := c.init(a, mem, alg, fallback); err != nil {
		return nil, err
	}
	return c, nil
}

// pendingColl is a call of a lazy team that has not connected: what can
// be checked without the peers is, the team opens (its first call) and
// the executor is built when the team has connected (finishInit).
func (t *Team) pendingColl(a Args, alg string) (*Coll, error) {
	if a.Coll != coll.Alltoallv {
		B, err := t.callBytes(a)
		if err != nil {
			return nil, err
		}
		if B == 0 {
			return &Coll{team: t, alg: alg, trivial: true}, nil
		}
	}
	if t.rw == nil {
		if err := t.open(); err != nil {
			return nil, err
		}
	}
	return &Coll{team: t, alg: alg, pending: &a}, nil
}

// finishInit builds a pending call's executor on its now connected team.
// It reports whether the call is to start; if not, the call has failed
// (with the error) or has nothing to move (done). Caller holds t.mu.
func (c *Coll) finishInit() bool {
	a := *c.pending
	c.pending = nil
	t := c.team
	mem, err := memoryOf(a)
	var alg, fallback string
	if err == nil {
		alg, fallback, err = t.algorithmFor(a, mem)
	}
	if err == nil {
		c.alg = alg
		err = c.init(a, mem, alg, fallback)
	}
	switch {
	case err != nil:
		c.state, c.err = collFailed, err
		return false
	case c.trivial:
		c.state = collDone
		return false
	}
	return true
}

// init builds c's executor for a call of alg (else fallback) on a
// connected team. Caller holds t.mu.
func (c *Coll) init(a Args, mem exec.Mem, alg, fallback string) (err error) {
	t := c.team
	if a.Coll == coll.Alltoallv {
		if err := c.newAlltoallv(a, mem); err != nil {
			c.free()
			return err
		}
		return nil
	}
	B, err := t.callBytes(a)
	if err != nil {
		return err
	}
	if B == 0 {
		c.trivial = true
		return nil
	}
	if !mem.IsHost() {
		if c.gpu, err = t.gpu(mem.Device); err != nil {
			return err
		}
	}
	if t.runsNode(a, mem, B) {
		if err := c.newNode(a, mem, B); err != nil {
			return err
		}
		c.node.messages = func() error { return c.newMachine(a, mem, alg, fallback, B) }
		return nil
	}
	if t.runsOnOneDevice(a, alg, mem) {
		if err := c.newOneDevice(a, mem, B); err != nil {
			return err
		}
		c.one.messages = func() error { return c.newMachine(a, mem, alg, fallback, B) }
		return nil
	}
	if t.runsCrossmem(a, mem, B) {
		if err := c.newCrossmem(a, B); err != nil {
			return err
		}
		c.cross.messages = func() error { return c.newMachine(a, mem, alg, fallback, B) }
		return nil
	}
	return c.newMachine(a, mem, alg, fallback, B)
}

// newMachine plans the call (alg, else fallback where alg does not serve
// the shape) and builds its executor over the caller's buffers: one
// Machine, or one per lane. On failure c holds nothing of it.
func (c *Coll) newMachine(a Args, mem exec.Mem, alg, fallback string, B int64) (err error) {
	t := c.team
	entry, err := t.planFor(a, alg, fallback, B, mem, t.deviceChunks(a, B, mem))
	if err != nil {
		return err
	}
	plan := entry.plan
	c.alg, c.entry = plan.Algorithm, entry
	prog := &plan.Ranks[t.rank]
	defer func() {
		if err != nil {
			c.free()
		}
	}()
	bufs, err := c.buffers(a, mem, prog.Sizes, B)
	if err != nil {
		return err
	}
	if w := t.callLanes(a, B); w > 1 && mem.IsHost() {
		// The whole call's plan gave the buffers; each lane plans its part.
		c.entry = nil
		return c.planLanes(a, plan.Algorithm, B, bufs, w)
	}
	return c.build(entry, prog, bufs, a)
}

// algorithmFor is the algorithm a call runs: the call's own, else the
// context's for its collective, else (device memory, nothing chosen) the
// device default or (a small host call, nothing chosen) the small one,
// with the host default as fallback where that does not serve the shape.
// It refuses datatypes and reductions goring does not run.
func (t *Team) algorithmFor(a Args, mem exec.Mem) (alg, fallback string, err error) {
	alg = a.Alg
	if alg == "" {
		B := int64(a.Count) * int64(a.Dtype.Size()) // callBytes refuses an overflow later
		alg, fallback = t.teamAlg(a.Coll, B, mem.IsHost())
	}
	if alg == "" {
		return "", "", NotSupported("collective %s", a.Coll)
	}
	if a.Dtype.Size() == 0 {
		return "", "", Invalid("datatype %d", a.Dtype)
	}
	if a.Coll.Reduces() && !coll.Supports(a.Op, a.Dtype) {
		return "", "", NotSupported("%s is not defined on %s", a.Op, a.Dtype)
	}
	return alg, fallback, nil
}

// teamAlg is the algorithm the team runs for c on B bytes when the call
// names none: the context's for c, else (device memory, nothing chosen)
// the device default or (a small host call, nothing chosen) the small
// one, with the context's as the fallback where that does not serve the
// shape. The model's scores predict this choice (scores.go).
func (t *Team) teamAlg(c coll.Collective, B int64, host bool) (alg, fallback string) {
	if t.ctx.opts.chosen[c] {
		return t.ctx.opts.algs[c], ""
	}
	return tune.DefaultAlgorithm(c, B, host, t.defaults())
}

// callBytes is the byte count of a call's vector (UCC's count of
// elements), refused where it would overflow the plan's arithmetic, and
// checks a bcast's root.
func (t *Team) callBytes(a Args) (int64, error) {
	if a.Coll == coll.Bcast && (a.Root < 0 || a.Root >= t.size) {
		return 0, Invalid("bcast root %d of a team of %d", a.Root, t.size)
	}
	esize := int64(a.Dtype.Size())
	if a.Count > uint64(1<<62)/uint64(esize)/uint64(t.size) {
		return 0, Invalid("count %d of %d-byte elements overflows", a.Count, esize)
	}
	return int64(a.Count) * esize, nil
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

// build makes c's executor for prog (of entry's plan) over bufs: an idle
// one of the entry's pool if there is one, else a new one with scratch of
// its own.
func (c *Coll) build(entry *planEntry, prog *sched.RankProgram, bufs exec.Buffers, a Args) (err error) {
	if c.pm = entry.take(); c.pm != nil {
		// A finished call's executor: only the buffers change (its
		// scratch stays).
		if err := c.pm.m.SetBuffers(bufs); err != nil {
			return invalidErr{err}
		}
		c.m = c.pm.m
		return nil
	}
	c.pm = &pooledMachine{gpu: c.gpu}
	if z := prog.Sizes.Scratch; z > 0 && c.gpu == nil {
		c.pm.scratch = ucx.Alloc(int(z))
		bufs.Scratch = exec.HostRegion(c.pm.scratch)
	}
	dtype, op := a.Coll.Reduction(a.Dtype, a.Op)
	cfg := exec.ConfigFor(entry.plan, dtype, op)
	if c.gpu != nil {
		if c.pm.devScratch, err = c.gpu.g.Alloc(prog.Sizes.Scratch); err != nil {
			return resourceErr{err}
		}
		bufs.Scratch = c.pm.devScratch
		cfg.Local = c.gpu.local
	}
	if c.pm.m, err = exec.New(prog, bufs, cfg); err != nil {
		return invalidErr{err}
	}
	c.m = c.pm.m
	return nil
}

// buffers maps UCC's buffers onto the program's src and dst (scratch is
// the executor's). In place:
// an allgather's src is the rank's own block of dst; an allreduce gets a
// private copy of dst as src (the plans receive into dst while they still
// read src), and so does a reduce_scatter, whose dst holds the whole input
// and whose result goes to the rank's block of it (UCC's meaning: dst +
// rank*count elements); a bcast has one buffer, src and dst alike.
func (c *Coll) buffers(a Args, mem exec.Mem, z sched.Sizes, B int64) (exec.Buffers, error) {
	view := func(p unsafe.Pointer, n int64) exec.Region { return c.view(mem, p, n) }
	if a.Dst == nil || (!a.InPlace && a.Coll != coll.Bcast && a.Src == nil) || (a.Coll == coll.Bcast && a.Src == nil && a.Dst == nil) {
		return exec.Buffers{}, Invalid("%s: missing buffer", a.Coll)
	}
	var b exec.Buffers
	switch {
	case a.Coll == coll.Bcast:
		buf := a.Dst
		if buf == nil {
			buf = a.Src
		}
		b.Src, b.Dst = view(buf, z.Src), view(buf, z.Dst)
	case a.InPlace && a.Coll == coll.Allgather:
		b.Dst = view(a.Dst, z.Dst)
		b.Src = b.Dst.Slice(int64(c.team.rank)*B, B)
	case a.InPlace && (a.Coll == coll.Allreduce || a.Coll == coll.ReduceScatter):
		// dst holds the whole input (z.Src bytes); an allreduce's result
		// is all of it, a reduce_scatter's this rank's block of it.
		whole := view(a.Dst, z.Src)
		b.Dst = whole.Slice(0, z.Dst)
		if a.Coll == coll.ReduceScatter {
			b.Dst = whole.Slice(int64(c.team.rank)*B, B)
		}
		if !mem.IsHost() {
			src, err := c.gpu.g.Alloc(z.Src)
			if err != nil {
				return b, resourceErr{err}
			}
			c.devOwn = append(c.devOwn, src)
			if err := c.gpu.local.CopyNow(src, whole); err != nil {
				return b, resourceErr{err}
			}
			b.Src = src
			break
		}
		src := c.alloc(z.Src)
		copy(src, whole.Bytes())
		b.Src = exec.HostRegion(src)
	default:
		b.Src, b.Dst = view(a.Src, z.Src), view(a.Dst, z.Dst)
	}
	return b, nil
}

// view is n bytes of the caller's memory at p.
func (c *Coll) view(mem exec.Mem, p unsafe.Pointer, n int64) exec.Region {
	if !mem.IsHost() {
		return deviceRegion(mem, p, n)
	}
	if n == 0 {
		return exec.HostRegion([]byte{})
	}
	return exec.HostRegion(unsafe.Slice((*byte)(p), n))
}

func (c *Coll) alloc(n int64) []byte {
	b := ucx.Alloc(int(n))
	c.owned = append(c.owned, b)
	return b
}

// free releases the call's own copies, and its executor: back to the
// plan's pool when the call completed or never started (it can serve the next call of the
// same shape), else with its scratch freed.
func (c *Coll) free() {
	for _, b := range c.owned {
		_ = ucx.Free(b)
	}
	c.owned = nil
	for _, r := range c.devOwn {
		_ = c.gpu.g.Free(r)
	}
	c.devOwn = nil
	if c.pm == nil {
		return
	}
	if (c.state == collDone || c.state == collInit) && c.m != nil {
		c.entry.put(c.pm)
	} else {
		c.pm.free()
	}
	c.pm, c.m = nil, nil
}

// Algorithm is the algorithm the call runs ("crossmem", "node_..." for
// the calls that run no sched program).
func (c *Coll) Algorithm() string { return c.alg }

// Post queues the call on its team and progresses the team.
func (c *Coll) Post() error {
	t := c.team
	t.mu.Lock()
	defer t.mu.Unlock()
	defer t.lockC()()
	defer t.noteBusy()
	switch c.state {
	case collInit, collDone, collFailed:
	default:
		return Invalid("collective posted again while in flight")
	}
	c.err = nil
	if c.trivial {
		c.state = collDone
		return nil
	}
	c.state = collQueued
	t.queue = append(t.queue, c)
	t.progress()
	return nil
}

// Test progresses the team and reports this call's state.
func (c *Coll) Test() (done bool, err error) {
	t := c.team
	t.mu.Lock()
	defer t.mu.Unlock()
	defer t.lockC()()
	defer t.noteBusy()
	t.progress()
	switch c.state {
	case collDone:
		return true, nil
	case collFailed:
		return false, c.err
	case collInit:
		return false, Invalid("collective tested before it was posted")
	}
	return false, nil
}

// start begins the call on the wire (the team's progress calls it in post
// order, which MPI's collective ordering makes the same on every rank, so
// the call sequence numbers in the tags agree).
func (c *Coll) start(tr *ucxmp.Transport) {
	if c.lanes != nil {
		c.startLanes()
		return
	}
	if c.one != nil {
		c.startOneDevice(tr)
		return
	}
	if c.cross != nil {
		c.startCrossmem(tr)
		return
	}
	if c.node != nil {
		c.startNode(tr)
		return
	}
	tr.NextCall()
	c.state = collRunning
	c.call.SetWatch(c.team.watch)
	m := c.m
	if c.xchg != nil && c.m == nil {
		// Alltoallv's count exchange first (alltoallv.go); a reposted
		// call has its plan already, on every rank alike.
		c.xchg.active, m = true, c.xchg.m
	}
	if err := c.call.Begin(m, tr, c.team.deadline()); err != nil {
		c.state, c.err = collFailed, err
	}
}

// exchanged plans an alltoallv whose count exchange has completed and puts
// it on the wire as the team's next call.
func (c *Coll) exchanged() error {
	c.xchg.active = false
	if err := c.planExchanged(); err != nil {
		return err
	}
	tr := c.team.tr
	tr.NextCall()
	return c.call.Begin(c.m, tr, c.team.deadline())
}

// poll progresses the running call once; it reports whether the call
// has finished (done or failed).
func (c *Coll) poll() bool {
	if c.state != collRunning {
		return true
	}
	if c.lanes != nil {
		return c.pollLanes()
	}
	if c.one != nil {
		return c.pollOneDevice()
	}
	if c.cross != nil {
		return c.pollCrossmem()
	}
	if c.node != nil {
		return c.pollNode()
	}
	done, err := c.call.Progress(time.Time{})
	if err == nil && done && c.xchg != nil && c.xchg.active {
		if err = c.exchanged(); err == nil {
			done, err = c.call.Progress(time.Time{})
		}
	}
	return c.settle(done, err)
}

// settle records the outcome of one progress of the call: it reports
// whether the call has finished (done or failed).
func (c *Coll) settle(done bool, err error) bool {
	switch {
	case err != nil:
		c.state, c.err = collFailed, err
	case done:
		c.state = collDone
	default:
		return false
	}
	return true
}

func (c *Coll) abort(cause error) {
	if c.state == collRunning && c.lanes != nil {
		c.abortLanes(cause)
		return
	}
	switch {
	case c.state == collRunning && c.one != nil:
		c.err = c.one.call.Abort(cause)
	case c.state == collRunning && c.cross != nil:
		c.err = c.cross.call.Abort(cause)
	case c.state == collRunning && c.node != nil:
		c.err = errors.Join(cause, c.abortNode(cause))
	case c.state == collRunning:
		c.err = c.call.Abort(cause)
	default:
		c.err = cause
	}
	c.state = collFailed
}

// Finalize releases the call; one still queued or running is withdrawn.
func (c *Coll) Finalize() {
	t := c.team
	t.mu.Lock()
	defer t.mu.Unlock()
	defer t.lockC()()
	defer t.noteBusy()
	switch c.state {
	case collRunning:
		c.abort(errFinalized)
		t.cur, t.cutShort = nil, true
	case collQueued:
		for i, q := range t.queue {
			if q == c {
				t.queue = append(t.queue[:i], t.queue[i+1:]...)
				break
			}
		}
	}
	c.free()
}
