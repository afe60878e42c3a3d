package onedevice

import (
	"errors"
	"fmt"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// Mapper names a rank's buffers for the leader and opens them there:
// package cudaexec's Engine (CUDA IPC handles, mappings cached per peer
// and allocation) and exec/fakedev's for the tests.
type Mapper interface {
	// Export is the key of the allocation that holds r, and r's offset
	// in it (at most MaxKeyLen bytes).
	Export(r exec.Region) (key []byte, off int64, err error)
	// Map is n bytes at off of peer's allocation key, as the leader's
	// device work on memory type on addresses it. The mapping is the
	// mapper's to keep; it stays open at least until Release.
	Map(peer int, key []byte, off, n int64, on exec.Mem) (exec.Region, error)
	// Release says a call no longer uses a mapping Map returned.
	Release(peer int, key []byte)
}

// Algorithm is the name of the leader algorithms in package sched: on a
// team whose ranks share one GPU, a call of one of them on device memory
// runs here instead of as the program's messages.
const Algorithm = "leader"

// Runs reports whether a call of alg on c by a team of size ranks that
// share one GPU runs here, its buffers on the device: the leader
// algorithm, of a collective this package serves. The team layer and
// goring bench choose by it alike.
func Runs(alg string, c coll.Collective, size int) bool {
	return alg == Algorithm && Serves(c, size)
}

// Serves reports whether c on a team of size ranks has a leader algorithm
// here: allreduce, allgather and bcast at any size, reduce_scatter while
// one fused step serves a block (up to exec.MultiMax ranks,
// ReduceScatterPlan).
func Serves(c coll.Collective, size int) bool {
	switch c {
	case coll.Allreduce, coll.Allgather, coll.Bcast:
		return true
	case coll.ReduceScatter:
		return size <= exec.MultiMax
	}
	return false
}

// InOrder is what a LocalExecutor implements to say that the steps it is
// given run in the order given (one GPU stream): the leader then starts a
// whole plan at once instead of waiting for each op's dependencies.
type InOrder interface{ InOrder() bool }

// Config is one call.
type Config struct {
	Collective coll.Collective // allreduce, allgather, reduce_scatter or bcast
	Rank, Size int
	Root       int // a bcast's
	// Src and Dst are this rank's buffers: B and B bytes for an
	// allreduce, B and Size*B for an allgather, Size*B and B for a
	// reduce_scatter, B and B for a bcast (the root's Src is the input;
	// UCC gives one buffer, Src is Dst). In place,
	// Src is Dst (an allreduce), Dst is Src's block Rank (a
	// reduce_scatter) or Src is Dst's block Rank (an allgather).
	Src, Dst  exec.Region
	Dtype     coll.Dtype
	Op        coll.Op
	Transport exec.Transport
	Mapper    Mapper
	// Local runs the leader's copies and reductions (rank 0 only).
	Local exec.LocalExecutor
	// Fuse bounds the operands of one op where Local runs exec.MultiOps
	// (0: exec.MultiMax; 1: pairwise ops only). Only rank 0's counts.
	Fuse int
	// Watch checks the peers while the call waits (nil: none); Deadline
	// ends a call that has not finished by then (zero: none). See exec's
	// timeout policy.
	Watch    exec.Watch
	Deadline time.Time
}

type callState int

const (
	stIdle      callState = iota
	stArriving            // the leader waits for ARRIVEs; a rank for FINISH
	stRunning             // the leader's plan is on the device
	stFinishing           // the leader waits for its FINISH sends
	stDone
	stFailed
)

// Token kinds: the high byte marks the package's tokens (bit 63 clear, as
// exec.Completion asks of callers that are not transports).
const (
	tokenMark  = uint64(0x4f) << 56
	kindArrive = 0
	kindFinish = 1
	kindOp     = 2
)

// Call is one call of the protocol, driven like exec.Call. A Call can be
// reused for the next call of the same team.
type Call struct {
	cfg      Config
	epoch    uint32
	state    callState
	err      error
	failure  error             // the leader's reason, sent to every rank in FINISH
	pace     exec.Pace         // the deadline and the watch
	arrive   [][arriveLen]byte // the leader's receive buffers (index: rank); a rank's own at [0]
	finish   [finishLen]byte
	inflight map[uint64]bool // transport operations posted and not completed
	arrived  int

	ops     []Op
	started []bool
	done    []bool
	nDone   int
	mapped  []mappedKey
	comps   []exec.Completion
	multi   exec.MultiOp // the fused op being handed over (no allocation per op)
}

type mappedKey struct {
	peer int
	key  []byte
}

func (c *Call) token(kind, idx int) uint64 {
	return tokenMark | uint64(c.epoch&0xffff)<<32 | uint64(kind)<<24 | uint64(idx)
}

func split(tok uint64) (epoch uint32, kind, idx int) {
	return uint32(tok>>32) & 0xffff, int(tok>>24) & 0xff, int(tok & 0xffffff)
}

// Begin starts the call: a rank exports its buffers and sends ARRIVE, the
// leader posts its receives. Nothing blocks.
func (c *Call) Begin(cfg Config) error {
	if !Serves(cfg.Collective, cfg.Size) {
		return fmt.Errorf("onedevice: no leader algorithm for %s on %d ranks", cfg.Collective, cfg.Size)
	}
	if cfg.Size < 1 || cfg.Rank < 0 || cfg.Rank >= cfg.Size || cfg.Size > 1<<12 {
		return fmt.Errorf("onedevice: rank %d of a team of %d", cfg.Rank, cfg.Size)
	}
	if cfg.Collective == coll.Bcast && (cfg.Root < 0 || cfg.Root >= cfg.Size) {
		return fmt.Errorf("onedevice: bcast root %d of a team of %d", cfg.Root, cfg.Size)
	}
	*c = Call{cfg: cfg, epoch: c.epoch + 1, arrive: c.arrive[:0], inflight: c.inflight, comps: c.comps[:0],
		pace: exec.Pace{Deadline: cfg.Deadline, Watch: cfg.Watch}}
	c.pace.Begin(time.Now())
	if c.inflight == nil {
		c.inflight = map[uint64]bool{}
	}
	clear(c.inflight)
	c.state = stArriving
	if cfg.Rank != 0 {
		return c.beginRank()
	}
	for len(c.arrive) < cfg.Size {
		c.arrive = append(c.arrive, [arriveLen]byte{})
	}
	for r := 1; r < cfg.Size; r++ {
		p := exec.Post{Peer: r, Tag: tagArrive, Buf: exec.HostRegion(c.arrive[r][:]), Token: c.token(kindArrive, r)}
		if err := c.post(cfg.Transport.PostRecv, &p); err != nil {
			return c.fail(err)
		}
	}
	return nil
}

// beginRank exports this rank's buffers, posts the receive of FINISH and
// sends ARRIVE (or the reason the buffers cannot be exported, so that the
// leader fails the call on every rank alike).
func (c *Call) beginRank() error {
	c.arrive = append(c.arrive, [arriveLen]byte{})
	b := c.arrive[0][:]
	src, serr := c.export(c.cfg.Src)
	dst, derr := c.export(c.cfg.Dst)
	if err := errors.Join(serr, derr); err != nil {
		putArriveFailed(b, err.Error())
	} else {
		putArrive(b, src, dst)
	}
	t := c.cfg.Transport
	fin := exec.Post{Peer: 0, Tag: tagFinish, Buf: exec.HostRegion(c.finish[:]), Token: c.token(kindFinish, 0)}
	if err := c.post(t.PostRecv, &fin); err != nil {
		return c.fail(err)
	}
	arr := exec.Post{Peer: 0, Tag: tagArrive, Buf: exec.HostRegion(b), Token: c.token(kindArrive, 0)}
	if err := c.post(t.PostSend, &arr); err != nil {
		return c.fail(err)
	}
	return nil
}

func (c *Call) export(r exec.Region) (bufferKey, error) {
	key, off, err := c.cfg.Mapper.Export(r)
	if err == nil && len(key) > MaxKeyLen {
		err = fmt.Errorf("a key of %d bytes, at most %d", len(key), MaxKeyLen)
	}
	if err != nil {
		return bufferKey{}, fmt.Errorf("%v: %w", r, err)
	}
	return bufferKey{key: key, off: off, len: r.Len()}, nil
}

func (c *Call) post(f func(*exec.Post) error, p *exec.Post) error {
	if err := f(p); err != nil {
		return fmt.Errorf("onedevice: rank %d, message to or from rank %d: %w", c.cfg.Rank, p.Peer, err)
	}
	c.inflight[p.Token] = true
	return nil
}

// Progress moves the call on until it is done or nothing happens by wait
// (a zero wait polls once). It returns done once this rank's part is over
// (for a rank: its results are in its buffers), and the call's error on
// failure; later calls return the same.
func (c *Call) Progress(wait time.Time) (bool, error) {
	for {
		switch c.state {
		case stDone:
			return true, nil
		case stFailed:
			return false, c.err
		}
		if moved, err := c.advance(); err != nil {
			return false, c.fail(err)
		} else if moved {
			continue
		}
		now := time.Now()
		if err := c.pace.Check(now, &wait); err != nil {
			return false, c.fail(fmt.Errorf("onedevice: rank %d %s after %v: %w", c.cfg.Rank, c.cfg.Collective, now.Sub(c.pace.Start).Round(time.Millisecond), err))
		}
		if stepped, err := c.pollDevice(now, &wait); err != nil {
			return false, c.fail(err)
		} else if stepped {
			continue
		}
		comps, err := c.cfg.Transport.Wait(wait, c.comps[:0])
		c.comps = comps[:0]
		if err != nil {
			return false, c.fail(fmt.Errorf("onedevice: rank %d: transport: %w", c.cfg.Rank, err))
		}
		if len(comps) == 0 {
			return false, nil
		}
		for _, comp := range comps {
			if err := c.complete(comp); err != nil {
				return false, c.fail(err)
			}
		}
	}
}

// advance takes the steps the state allows; moved says something changed.
func (c *Call) advance() (moved bool, err error) {
	switch {
	case c.state == stArriving && c.cfg.Rank != 0:
		if len(c.inflight) == 0 {
			c.state = stDone
			if err := readFinish(c.finish[:]); err != nil {
				return true, fmt.Errorf("onedevice: rank %d %s: %w", c.cfg.Rank, c.cfg.Collective, err)
			}
			return true, nil
		}
	case c.state == stArriving && c.arrived == c.cfg.Size-1:
		if err := c.plan(); err != nil {
			c.failure = err
			return true, c.sendFinish()
		}
		c.state = stRunning
		if _, err := c.startOps(); err != nil {
			return true, c.leaderFail(err)
		}
		return true, nil
	case c.state == stRunning:
		if c.nDone == len(c.ops) {
			c.release()
			return true, c.sendFinish()
		}
		started, err := c.startOps()
		if err != nil {
			return true, c.leaderFail(err)
		}
		return started, nil
	case c.state == stFinishing && len(c.inflight) == 0:
		if c.failure != nil {
			c.state, c.err = stFailed, fmt.Errorf("onedevice: rank 0 %s: %w", c.cfg.Collective, c.failure)
			return false, c.err
		}
		c.state = stDone
		return true, nil
	}
	return false, nil
}

// plan maps every rank's buffers and makes the call's ops.
func (c *Call) plan() error {
	n := c.cfg.Size
	srcs, dsts := make([]exec.Region, n), make([]exec.Region, n)
	srcs[0], dsts[0] = c.cfg.Src, c.cfg.Dst
	// Buffers that cannot be exported or mapped make the call ErrUnmapped
	// (the caller may run it another way); ranks that disagree on its
	// size fail it.
	var errs, disagree []error
	for r := 1; r < n; r++ {
		src, dst, err := readArrive(c.arrive[r][:], r)
		if err == nil {
			srcs[r], err = c.open(r, src)
		}
		if err == nil {
			dsts[r], err = c.open(r, dst)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if srcs[r].Len() != c.cfg.Src.Len() || dsts[r].Len() != c.cfg.Dst.Len() {
			disagree = append(disagree, fmt.Errorf("rank %d's buffers hold %d and %d bytes, rank 0's %d and %d: the ranks disagree on the call", r, srcs[r].Len(), dsts[r].Len(), c.cfg.Src.Len(), c.cfg.Dst.Len()))
		}
	}
	if len(errs)+len(disagree) > 0 {
		c.release()
		if len(disagree) > 0 {
			return errors.Join(append(disagree, errs...)...)
		}
		return unmapped{errors.Join(errs...)}
	}
	fuse := 1
	if _, ok := c.cfg.Local.(exec.MultiLocal); ok {
		fuse = exec.MultiMax
		if c.cfg.Fuse > 0 {
			fuse = min(c.cfg.Fuse, exec.MultiMax)
		}
	}
	switch c.cfg.Collective {
	case coll.Allreduce:
		c.ops = AllreducePlan(srcs, dsts, fuse)
	case coll.Allgather:
		c.ops = AllgatherPlan(srcs, dsts, fuse)
	case coll.ReduceScatter:
		if n > fuse {
			c.release()
			return fmt.Errorf("a reduce_scatter on one device is one fused step per block: at most %d ranks with this executor, not %d", fuse, n)
		}
		c.ops = ReduceScatterPlan(srcs, dsts)
	case coll.Bcast:
		c.ops = BcastPlan(srcs, dsts, c.cfg.Root, fuse)
	}
	c.started, c.done = make([]bool, len(c.ops)), make([]bool, len(c.ops))
	return nil
}

func (c *Call) open(peer int, k bufferKey) (exec.Region, error) {
	r, err := c.cfg.Mapper.Map(peer, k.key, k.off, k.len, c.cfg.Dst.Mem())
	if err != nil {
		return r, fmt.Errorf("mapping rank %d's buffer: %w", peer, err)
	}
	c.mapped = append(c.mapped, mappedKey{peer, k.key})
	return r, nil
}

func (c *Call) release() {
	for _, m := range c.mapped {
		c.cfg.Mapper.Release(m.peer, m.key)
	}
	c.mapped = c.mapped[:0]
}

// startOps hands the executor every op it may run now: all of them for an
// in-order executor, else those whose dependencies have finished. It
// reports whether it started any.
func (c *Call) startOps() (bool, error) {
	inOrder := false
	if o, ok := c.cfg.Local.(InOrder); ok {
		inOrder = o.InOrder()
	}
	any := false
	for i := range c.ops {
		if c.started[i] || (!inOrder && !c.ready(i)) {
			continue
		}
		any = true
		op := &c.ops[i]
		c.started[i] = true
		done, err := c.launch(i, op)
		if err != nil {
			return any, fmt.Errorf("%s %d of %d: %w", opName(op.Kind), i, len(c.ops), err)
		}
		if done {
			c.done[i] = true
			c.nDone++
		}
	}
	return any, nil
}

// launch hands op i to the executor: a fused op as one exec.MultiOp.
func (c *Call) launch(i int, op *Op) (bool, error) {
	tok := c.token(kindOp, i)
	if op.fused() {
		ml, ok := c.cfg.Local.(exec.MultiLocal)
		if !ok {
			return true, fmt.Errorf("the executor runs no fused steps")
		}
		c.multi = exec.MultiOp{Token: tok, Kind: op.Kind, Dsts: op.Dsts, Srcs: op.Srcs, Dtype: c.cfg.Dtype, Op: c.cfg.Op}
		return ml.LocalMulti(&c.multi)
	}
	lop := exec.LocalOp{Step: i, Token: tok, Kind: op.Kind, Dst: op.Dsts[0], Src: op.Srcs[0], Dtype: c.cfg.Dtype, Op: c.cfg.Op}
	return c.cfg.Local.Local(&lop)
}

func (c *Call) ready(i int) bool {
	for _, d := range c.ops[i].Deps {
		if !c.done[d] {
			return false
		}
	}
	return true
}

func opName(k sched.StepOp) string {
	if k == sched.OpReduce {
		return "reduction"
	}
	return "copy"
}

// leaderFail ends the leader's plan because of err: the ops still on the
// device are cancelled (which waits until they no longer touch any
// buffer), and every rank is told why.
func (c *Call) leaderFail(err error) error {
	errs := c.cancelOps()
	c.release()
	c.failure = errors.Join(append([]error{err}, errs...)...)
	return c.sendFinish()
}

// cancelOps withdraws the ops started and not finished (the executor's
// Cancel returns once an op no longer touches its buffers) and marks them
// done; it returns what the cancellations said.
func (c *Call) cancelOps() []error {
	async, ok := c.cfg.Local.(exec.AsyncLocal)
	if !ok {
		return nil
	}
	var errs []error
	for i := range c.ops {
		if c.started[i] && !c.done[i] {
			errs = append(errs, async.Cancel(c.token(kindOp, i)))
			c.done[i] = true
		}
	}
	return errs
}

// sendFinish tells every rank the outcome (c.failure, nil: ok).
func (c *Call) sendFinish() error {
	c.state = stFinishing
	putFinish(c.finish[:], c.failure)
	for r := 1; r < c.cfg.Size; r++ {
		p := exec.Post{Peer: r, Tag: tagFinish, Buf: exec.HostRegion(c.finish[:]), Token: c.token(kindFinish, r)}
		if err := c.post(c.cfg.Transport.PostSend, &p); err != nil {
			return err
		}
	}
	return nil
}

// complete feeds one completion.
func (c *Call) complete(comp exec.Completion) error {
	epoch, kind, idx := split(comp.Token)
	if comp.Token&(0xff<<56) != tokenMark || epoch != c.epoch&0xffff {
		return nil // an earlier call's
	}
	if kind == kindOp {
		if idx >= len(c.ops) || c.done[idx] {
			return nil
		}
		c.done[idx] = true
		if comp.Err != nil && c.state == stRunning {
			return c.leaderFail(fmt.Errorf("%s %d of %d: %w", opName(c.ops[idx].Kind), idx, len(c.ops), comp.Err))
		}
		c.nDone++
		return nil
	}
	if !c.inflight[comp.Token] {
		return nil
	}
	delete(c.inflight, comp.Token)
	if comp.Err != nil {
		return fmt.Errorf("onedevice: rank %d %s, message with rank %d: %w", c.cfg.Rank, c.cfg.Collective, idx, comp.Err)
	}
	if kind == kindArrive && c.cfg.Rank == 0 {
		if comp.Len != arriveLen {
			return fmt.Errorf("onedevice: rank %d sent %d bytes where its buffers' names take %d", idx, comp.Len, arriveLen)
		}
		c.arrived++
	}
	if kind == kindFinish && c.cfg.Rank != 0 && comp.Len != finishLen {
		return fmt.Errorf("onedevice: rank 0 sent %d bytes where the outcome takes %d", comp.Len, finishLen)
	}
	return nil
}

// pollDevice feeds the executor's finished ops and, while ops are on the
// device, bounds the wait by its poll interval (as exec.Call does).
func (c *Call) pollDevice(now time.Time, wait *time.Time) (bool, error) {
	async, _ := c.cfg.Local.(exec.AsyncLocal)
	if c.state != stRunning || async == nil || async.Pending() == 0 {
		return false, nil
	}
	comps := async.Poll(c.comps[:0])
	c.comps = comps[:0]
	for _, comp := range comps {
		if err := c.complete(comp); err != nil {
			return false, err
		}
	}
	if len(comps) > 0 {
		return true, nil
	}
	if next := now.Add(exec.PollIntervalOf(async)); wait.After(next) {
		*wait = next
	}
	return false, nil
}

// Abort ends an unfinished call (a caller giving up): what is in flight
// is cancelled.
func (c *Call) Abort(cause error) error {
	if c.state == stDone || c.state == stFailed {
		return c.err
	}
	return c.fail(fmt.Errorf("onedevice: rank %d %s: %w", c.cfg.Rank, c.cfg.Collective, cause))
}

// fail cancels what is in flight and records err. Device ops still
// running are waited for by the executor's Cancel, so no op touches the
// buffers once fail returns.
func (c *Call) fail(err error) error {
	if c.state == stFailed {
		return c.err
	}
	errs := append([]error{err}, c.cancelOps()...)
	for tok := range c.inflight {
		errs = append(errs, c.cfg.Transport.Cancel(tok))
		delete(c.inflight, tok)
	}
	c.release()
	c.state, c.err = stFailed, errors.Join(errs...)
	return c.err
}
