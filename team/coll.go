package team

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/ucx"
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
	// Routing is dispatch's and combine's token traffic (moe.go); nil for
	// the other collectives.
	Routing *moe.Routing
	// Chunks > 1 pipelines the sched program's long transfers in that
	// many pieces (sched.Spec.Chunks); 0: the team's choice. UCC never
	// sets it; goring bench's --chunks does.
	Chunks int
}

type collState int

const (
	collInit collState = iota
	collQueued
	collRunning
	collDone
	collFailed
)

// Coll is one collective call of a team: what it asks (call), the
// runner that moves its bytes (run, chosen by Select), and the memory the
// call owns whatever runs it.
type Coll struct {
	team  *Team
	alg   string
	call  *Call  // the call resolved for its team; nil while pending or trivial
	run   Runner // nil while pending or trivial
	state collState
	err   error
	// trivial: zero elements, done at post.
	trivial bool
	// pending is the call of a lazy team posted before the team connected:
	// its runner is built when the team has (finishInit); nil: built.
	pending *Args
	// The call's memory: private copies (ucx.Alloc'd, or on the device),
	// freed at finalize, and the pooled executor of a sched program with
	// its plan, back to the plan's pool when the call completed.
	owned  [][]byte
	devOwn []exec.Region
	input  privateCopy // an in-place (or misaligned) call's input copy, taken at each post (machine.go)
	output privateCopy // a misaligned output's aligned stand-in, copied out when the call completes (aligned.go)
	gpu    *teamGPU    // nil for host memory
	pm     *pooledMachine
	entry  *planEntry
	// heldCounted: PostOn refused the call, so UCC holds the caller's
	// stream until it completes; it counts in heldCalls until then
	// (held.go).
	heldCounted bool
}

// NewColl resolves the call and selects its runner over the caller's
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
		if a.Coll == coll.Alltoallv && !mem.IsHost() {
			// What newAlltoallvRunner refuses on a connected team, refused
			// now too: UCC hands the call to its next layer at init, which
			// it cannot do once the call is posted.
			return nil, NotSupported("alltoallv on device memory (not yet tested through the team layer)")
		}
		if !mem.IsHost() {
			t.loadKernelsOn(mem.Device)
		}
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
// its runner is selected when the team has connected (finishInit).
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

// finishInit selects a pending call's runner on its now connected team.
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

// init resolves the call of alg (else fallback) on a connected team and
// selects its runner. Caller holds t.mu.
func (c *Coll) init(a Args, mem exec.Mem, alg, fallback string) error {
	t := c.team
	call := &Call{coll: c, Args: a, mem: mem, alg: alg, fallback: fallback}
	if a.Coll != coll.Alltoallv { // alltoallv's bytes differ by peer (alltoallv.go)
		B, err := t.callBytes(a)
		if err != nil {
			return err
		}
		if B == 0 {
			c.trivial = true
			return nil
		}
		call.bytes = B
		if !mem.IsHost() {
			if c.gpu, err = t.gpu(mem.Device); err != nil {
				return err
			}
		}
	}
	r, err := Select(call, t)
	if err != nil {
		c.free()
		return err
	}
	c.call, c.run = call, r
	return nil
}

// algorithmFor is the algorithm a call runs: the call's own, else the
// team's (teamAlg), with a fallback where that does not serve the shape.
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
	if err := routedMemory(a, mem); err != nil {
		return "", "", err
	}
	if a.Coll.Reduces() && !coll.Supports(a.Op, a.Dtype) {
		return "", "", NotSupported("%s is not defined on %s", a.Op, a.Dtype)
	}
	return alg, fallback, nil
}

// teamAlg is the algorithm the team runs for c on B bytes when the call
// names none: the context's for c, else (nothing chosen, or auto) goring's
// one choice (choose.Auto on this team's shape, gpu.go), with the
// fallback where that does not serve the shape. The model's scores
// predict this choice (scores.go).
func (t *Team) teamAlg(c coll.Collective, B int64, host bool) (alg, fallback string) {
	if t.ctx.opts.chosen[c] {
		return t.ctx.opts.algs[c], ""
	}
	ch := t.choice(c, B, host)
	return ch.Alg, ch.Fallback
}

// callBytes is the byte count of a call's vector (UCC's count of
// elements; dispatch's and combine's token row), refused where it would
// overflow the plan's arithmetic, and checks a bcast's root.
func (t *Team) callBytes(a Args) (int64, error) {
	if a.Coll.Routed() {
		return routedBytes(a) // moe.go
	}
	if a.Coll == coll.Bcast && (a.Root < 0 || a.Root >= t.size) {
		return 0, Invalid("bcast root %d of a team of %d", a.Root, t.size)
	}
	esize := int64(a.Dtype.Size())
	if a.Count > uint64(1<<62)/uint64(esize)/uint64(t.size) {
		return 0, Invalid("count %d of %d-byte elements overflows", a.Count, esize)
	}
	return int64(a.Count) * esize, nil
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
// plan's pool when the call completed or never started (it can serve the
// next call of the same shape), else with its scratch freed.
func (c *Coll) free() {
	for _, b := range c.owned {
		_ = ucx.Free(b)
	}
	c.owned = nil
	for _, r := range c.devOwn {
		_ = c.gpu.g.Free(r)
	}
	c.devOwn = nil
	c.input, c.output = privateCopy{}, privateCopy{}
	if rl, ok := c.run.(releaser); ok {
		rl.release(c.state == collDone || c.state == collInit)
	}
	if c.pm == nil {
		return
	}
	if c.state == collDone || c.state == collInit {
		c.entry.put(c.pm)
	} else {
		c.pm.free()
	}
	c.pm = nil
}

// Algorithm is the algorithm the call runs ("crossmem", "node_..." for
// the calls that run no sched program).
func (c *Coll) Algorithm() string { return c.alg }

// Runner names the runner that runs the call now (the selection's name:
// "machine", "lanes", "node", "onedevice", "crossmem", "alltoallv",
// "moe"), which a fallback may change at a post; "" for a call that runs
// none (nothing to move, or a lazy team's call not yet built). With
// Algorithm it says what the team chose for a call that named no
// algorithm (goring bench --alg auto).
func (c *Coll) Runner() string {
	t := c.team
	t.mu.Lock()
	defer t.mu.Unlock()
	return c.runnerName()
}

// runnerName is Runner's answer; the caller holds the team's lock.
func (c *Coll) runnerName() string {
	if c.call == nil || c.run == nil || c.call.at < 0 || c.call.at >= len(selection) {
		return ""
	}
	return selection[c.call.at].name
}

// Post queues the call on its team and progresses the team.
func (c *Coll) Post() error {
	t := c.team
	t.mu.Lock()
	defer t.mu.Unlock()
	defer unlockC(t.lockC())
	defer t.noteBusy()
	return c.post()
}

// post is Post's body; the caller holds the team's locks.
func (c *Coll) post() error {
	t := c.team
	switch c.state {
	case collInit, collDone, collFailed:
	default:
		return Invalid("collective posted again while in flight")
	}
	c.err = nil
	if !c.heldCounted {
		t.closeParkedMappings()
	}
	if c.trivial {
		c.state = collDone
		c.unhold()
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
	if t.pollsKernelOnly() {
		// A node kernel's poll touches nothing the C lock guards
		// (nodepoll.go): the lock is taken only if C must learn that
		// Go's call ended.
		t.progress()
		t.noteBusyChanged()
	} else {
		t.progressC()
	}
	switch c.state {
	case collDone:
		c.unhold()
		return true, nil
	case collFailed:
		c.unhold()
		return false, c.err
	case collInit:
		return false, Invalid("collective tested before it was posted")
	}
	return false, nil
}

// progressC progresses the team under the C lock, and tells C whether Go
// has a call on the wire or queued. Caller holds t.mu.
func (t *Team) progressC() {
	defer unlockC(t.lockC())
	defer t.noteBusy()
	t.progress()
}

// start puts the call on the wire with its runner (the team's progress
// calls it in post order, which MPI's collective ordering makes the same
// on every rank, so the call sequence numbers in the tags agree).
func (c *Coll) start() {
	c.state = collRunning
	if err := c.begin(); err != nil {
		c.state, c.err = collFailed, err
	}
}

// begin begins the call with its runner, or with the next runners of its
// selection while one finds it cannot run the call.
func (c *Coll) begin() error {
	if c.run == nil {
		return fmt.Errorf("goring: internal error: a %s call started with no runner", c.alg)
	}
	if err := c.run.Begin(); !errors.Is(err, errFallBack) {
		return err
	}
	return c.fallBack()
}

// fallBack runs the call as the next runner of its selection, which every
// rank does at the same call; the call keeps that runner for its later
// posts.
func (c *Coll) fallBack() error {
	r, err := c.call.next(c.team)
	if err != nil {
		c.free()
		return err
	}
	c.run = r
	return c.begin()
}

// poll progresses the running call once; it reports whether the call
// has finished (done or failed).
func (c *Coll) poll() bool {
	if c.state != collRunning {
		return true
	}
	done, err := c.run.Progress()
	if errors.Is(err, errFallBack) {
		if err = c.fallBack(); err == nil {
			return c.poll()
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
		if err := c.copyOutput(); err != nil {
			c.state, c.err = collFailed, err
			return true
		}
		c.state = collDone
	default:
		return false
	}
	return true
}

// abort ends the call because of cause; a running call's runner cancels
// what it has in flight.
func (c *Coll) abort(cause error) {
	if c.state == collRunning {
		c.err = c.run.Abort(cause)
	} else {
		c.err = cause
	}
	c.state = collFailed
}

// Finalize releases the call; one still queued or running is withdrawn.
func (c *Coll) Finalize() {
	t := c.team
	t.mu.Lock()
	defer t.mu.Unlock()
	defer unlockC(t.lockC())
	defer t.noteBusy()
	switch c.state {
	case collRunning:
		c.abort(errFinalized)
		t.cur, t.cutShort = nil, true
	case collQueued:
		// Not on the wire here, but peers may have begun it already
		// (their previous call ended first) and sent this rank messages
		// that no call of this worker will receive: the team must not
		// hand its workers to the next team as clean, whose call of the
		// same sequence number would take them (workerpool.go).
		t.cutShort = true
		for i, q := range t.queue {
			if q == c {
				t.queue = append(t.queue[:i], t.queue[i+1:]...)
				break
			}
		}
	}
	c.unhold()
	c.free()
}
