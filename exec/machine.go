package exec

import (
	"fmt"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/reduce"
	"github.com/goring-hpc/goring/sched"
)

// Buffers are one rank's memory for one collective call. Src is the
// caller's input (never written), Dst the caller's output, Scratch the
// library's temporary memory (New allocates host scratch from
// Sizes.Scratch when it is absent; device scratch must be given). Each may
// be of any memory type; a Machine with device memory needs a
// LocalExecutor for it (Config.Local).
type Buffers struct {
	Src, Dst, Scratch Region
}

// HostBuffers are host buffers from Go slices (scratch may be nil).
func HostBuffers(src, dst, scratch []byte) Buffers {
	return Buffers{Src: HostRegion(src), Dst: HostRegion(dst), Scratch: HostRegion(scratch)}
}

// Of is buffer k (the zero Region for a k that names none).
func (b *Buffers) Of(k sched.Buf) Region {
	switch k {
	case sched.BufSrc:
		return b.Src
	case sched.BufDst:
		return b.Dst
	case sched.BufScratch:
		return b.Scratch
	}
	return Region{}
}

// onHost reports whether every buffer is host memory.
func (b *Buffers) onHost() bool { return b.Src.IsHost() && b.Dst.IsHost() && b.Scratch.IsHost() }

// Config says how to run a rank's program.
type Config struct {
	// Collective and Algorithm name the call in errors.
	Collective coll.Collective
	Algorithm  string
	// NRanks bounds peers: every send and recv peer is in [0, NRanks).
	NRanks int
	// Dtype and Op define reduce steps. They are checked at New whenever
	// they are set or the program has a reduce step.
	Dtype coll.Dtype
	Op    coll.Op
	// Local runs copy and reduce steps; nil runs them on the host, inline.
	Local LocalExecutor
}

// ConfigFor fills a Config from a plan.
func ConfigFor(plan *sched.Plan, dtype coll.Dtype, op coll.Op) Config {
	return Config{Collective: plan.Collective, Algorithm: plan.Algorithm, NRanks: plan.NRanks, Dtype: dtype, Op: op}
}

// Post is one send or receive to post.
type Post struct {
	Step  int
	Peer  int
	Tag   uint32
	Buf   Region
	Token uint64
	Path  sched.Path // routing hint of a send, for a multi-path data plane
}

// Ready is a batch of operations to post, in the order to post them: all
// receives, then all sends, each list in ascending step id per (peer, tag).
// Its slices belong to the Machine and stay valid until the next call to
// Start, Step or Ready.
type Ready struct {
	Recvs []Post
	Sends []Post
}

// Empty reports whether there is nothing to post.
func (r Ready) Empty() bool { return len(r.Recvs) == 0 && len(r.Sends) == 0 }

// Step states.
const (
	stWaiting  uint8 = iota // deps (or an earlier same-tag post) pending
	stReady                 // in the current Ready batch or the local work list
	stInFlight              // posted, or an asynchronous local step running
	stDone
	// stBatched: running as a member of a batch (BatchLocal)
	// other than its first step, whose completion completes it.
	stBatched
)

// batchNext's values that name no step: the last member of a batch, and a
// step in flight on its own.
const (
	batchEnd   int32 = -1
	notBatched int32 = -2
)

// Machine runs one rank's program. It is a pure state machine: it never
// calls a transport, never blocks and, after New, never allocates. Use it
// from one goroutine.
type Machine struct {
	prog *sched.RankProgram
	cfg  Config
	bufs Buffers

	kernel reduce.Func // reduce steps on the host path
	local  LocalExecutor
	batch  BatchLocal // local, where it runs batches of copies
	// batchReduce: batch also runs batches of reductions (BatchReduce).
	batchReduce bool

	// Built once at New.
	initPending []int32 // deps per step, +1 when an earlier post shares (op, peer, tag)
	depOff      []int32 // dependents of step i: depList[depOff[i]:depOff[i+1]]
	depList     []int32
	nextSame    []int32 // next step with the same (op, peer, tag), or -1

	// Per call.
	pending    []int32
	state      []uint8
	epoch      uint32
	remaining  int // steps not yet done
	inFlight   int
	err        error
	recvs      []Post
	sends      []Post
	work       []int32 // local steps ready to run
	workCopy   int     // how many of work are copies
	workReduce int     // how many of work are reductions
	localOp    LocalOp
	// A batch in flight is a chain from its first step (in
	// state stInFlight, the batch's token) through batchNext to
	// batchEnd, the others in state stBatched; a local step in flight
	// on its own has notBatched. Set when a step starts, so never stale
	// for a step in flight. Allocated only for a BatchLocal.
	batchNext []int32
	batchIDs  []int32      // the steps of the batch being handed over (room for every step: it trades places with work)
	batchArg  Batch        // the batch being handed over (reused: handing one over allocates nothing)
	comps     []Completion // Run's completion buffer
	started   bool
	// deferLocal leaves ready local steps queued in Start and Step until
	// RunLocal runs them, so that a driver can post the sends and receives
	// that became ready first (Run does). Off: they run at once.
	deferLocal bool
}

// New validates prog against bufs and cfg and builds the Machine. Every
// buffer range of every step must lie inside the given buffers, peers must
// be in range, reduce steps must be whole, aligned elements of a supported
// dtype/op. Nothing is written to the buffers.
func New(prog *sched.RankProgram, bufs Buffers, cfg Config) (*Machine, error) {
	if prog == nil {
		return nil, fmt.Errorf("exec: nil program")
	}
	if cfg.NRanks < 1 || prog.Rank < 0 || prog.Rank >= cfg.NRanks {
		return nil, fmt.Errorf("exec: rank %d is not in a job of %d ranks", prog.Rank, cfg.NRanks)
	}
	m := &Machine{prog: prog, cfg: cfg, local: cfg.Local}
	m.batch, _ = cfg.Local.(BatchLocal)
	if br, ok := cfg.Local.(BatchReduce); ok {
		m.batchReduce = br.BatchesReduce()
	}
	hasReduce := false
	for i := range prog.Steps {
		if prog.Steps[i].Op == sched.OpReduce {
			hasReduce = true
			break
		}
	}
	if hasReduce || cfg.Dtype != coll.DtypeInvalid || cfg.Op != coll.OpInvalid {
		k, err := reduce.Kernel(cfg.Dtype, cfg.Op)
		if err != nil {
			return nil, fmt.Errorf("exec: rank %d %s: %w", prog.Rank, m.callName(), err)
		}
		m.kernel = k
	}
	if bufs.Scratch.Absent() && prog.Sizes.Scratch > 0 {
		if !bufs.Src.IsHost() || !bufs.Dst.IsHost() {
			return nil, fmt.Errorf("exec: rank %d %s: %d bytes of scratch on %v must be given (Buffers.Scratch)", prog.Rank, m.callName(), prog.Sizes.Scratch, bufs.Dst.Mem())
		}
		bufs.Scratch = HostRegion(alignedBytes(prog.Sizes.Scratch))
	}
	if err := m.check(bufs); err != nil {
		return nil, err
	}
	m.bufs = bufs
	if err := m.build(); err != nil {
		return nil, err
	}
	return m, nil
}

// alignedBytes allocates n bytes aligned to 8, so any dtype can be reduced
// in place.
func alignedBytes(n int64) []byte {
	w := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(w)*8)[:n]
}

func (m *Machine) callName() string {
	if m.cfg.Algorithm == "" {
		return string(m.cfg.Collective)
	}
	return string(m.cfg.Collective) + "/" + m.cfg.Algorithm
}

// stepErr formats a validation error of step id.
func (m *Machine) stepErr(id int, format string, args ...any) error {
	s := &m.prog.Steps[id]
	return fmt.Errorf("exec: rank %d %s: step %d (%v): %s", m.prog.Rank, m.callName(), id, s.Op, fmt.Sprintf(format, args...))
}

// check validates every step against bufs.
func (m *Machine) check(bufs Buffers) error {
	if !bufs.onHost() && m.local == nil {
		return fmt.Errorf("exec: rank %d %s: buffers on %v, %v, %v need a LocalExecutor for that memory (Config.Local)", m.prog.Rank, m.callName(), bufs.Src.Mem(), bufs.Dst.Mem(), bufs.Scratch.Mem())
	}
	size := int64(m.cfg.Dtype.Size())
	for id := range m.prog.Steps {
		s := &m.prog.Steps[id]
		if s.Len < 0 {
			return m.stepErr(id, "negative length %d", s.Len)
		}
		for _, d := range m.prog.Deps(id) {
			if d < 0 || int(d) >= id {
				return m.stepErr(id, "depends on step %d, which is not an earlier step", d)
			}
		}
		var reads, writes bool
		switch s.Op {
		case sched.OpSend:
			reads = true
		case sched.OpRecv:
			writes = true
		case sched.OpCopy, sched.OpReduce:
			reads, writes = true, true
		default:
			return m.stepErr(id, "unknown op")
		}
		if s.Op == sched.OpSend || s.Op == sched.OpRecv {
			if s.Peer < 0 || int(s.Peer) >= m.cfg.NRanks {
				return m.stepErr(id, "peer %d is not in [0, %d)", s.Peer, m.cfg.NRanks)
			}
			if s.Tag < 0 {
				return m.stepErr(id, "negative tag %d", s.Tag)
			}
		}
		if reads {
			if err := m.checkRange(id, bufs, "reads", s.SrcBuf, s.SrcOff, s.Len); err != nil {
				return err
			}
		}
		if writes {
			if s.DstBuf == sched.BufSrc {
				return m.stepErr(id, "writes the src buffer, which is the caller's input")
			}
			if err := m.checkRange(id, bufs, "writes", s.DstBuf, s.DstOff, s.Len); err != nil {
				return err
			}
		}
		if s.Op == sched.OpReduce {
			if s.Len%size != 0 {
				return m.stepErr(id, "%d bytes is not a whole number of %v elements", s.Len, m.cfg.Dtype)
			}
			if s.SrcOff%size != 0 || s.DstOff%size != 0 {
				return m.stepErr(id, "offsets %d and %d are not multiples of the %v size %d", s.SrcOff, s.DstOff, m.cfg.Dtype, size)
			}
			src := bufs.Of(s.SrcBuf).Addr() + uintptr(s.SrcOff)
			dst := bufs.Of(s.DstBuf).Addr() + uintptr(s.DstOff)
			if s.Len > 0 && (src%uintptr(size) != 0 || dst%uintptr(size) != 0) {
				return m.stepErr(id, "%v and %v buffers must be aligned to %d bytes for %v", s.SrcBuf, s.DstBuf, size, m.cfg.Dtype)
			}
		}
	}
	return nil
}

func (m *Machine) checkRange(id int, bufs Buffers, verb string, b sched.Buf, off, n int64) error {
	if b != sched.BufSrc && b != sched.BufDst && b != sched.BufScratch {
		return m.stepErr(id, "%s unknown buffer %v", verb, b)
	}
	size := bufs.Of(b).Len()
	if off < 0 || off > size || n > size-off {
		return m.stepErr(id, "%s %v[%d:%d], outside the %d-byte %v buffer", verb, b, off, off+n, size, b)
	}
	return nil
}

// build computes the dependents lists, the same-(op, peer, tag) chains and
// every per-call slice at its final capacity.
func (m *Machine) build() error {
	n := len(m.prog.Steps)
	if uint64(n) > 1<<32-1 {
		return fmt.Errorf("exec: rank %d: %d steps is more than a token can name", m.prog.Rank, n)
	}
	g := BuildGraph(m.prog)
	m.initPending, m.depOff, m.depList, m.nextSame = g.InitPending, g.DepOff, g.DepList, g.NextSame
	m.pending = make([]int32, n)
	m.state = make([]uint8, n)
	m.recvs = make([]Post, 0, g.Recvs)
	m.sends = make([]Post, 0, g.Sends)
	m.work = make([]int32, 0, n)
	if m.batch != nil {
		m.batchNext = make([]int32, n)
		m.batchIDs = make([]int32, 0, n)
	}
	m.comps = make([]Completion, 0, g.Sends+g.Recvs+n)
	return nil
}

// Rank is the rank whose program the Machine runs.
func (m *Machine) Rank() int { return m.prog.Rank }

// Config returns the configuration the Machine was built with.
func (m *Machine) Config() Config { return m.cfg }

// Buffers returns the buffers of the next or current call (with the
// scratch New allocated).
func (m *Machine) Buffers() Buffers { return m.bufs }

// SetBuffers points the Machine at new src/dst buffers (and scratch, when
// b.Scratch is not nil; otherwise the current scratch is kept) for the
// next call, validating them like New. It fails while a call is running.
func (m *Machine) SetBuffers(b Buffers) error {
	if m.started && !m.Done() && m.err == nil {
		return fmt.Errorf("exec: rank %d %s: SetBuffers during a call", m.prog.Rank, m.callName())
	}
	if b.Scratch.Absent() {
		b.Scratch = m.bufs.Scratch
	}
	if err := m.check(b); err != nil {
		return err
	}
	m.bufs = b
	return nil
}

// Start begins a call: every step is reset, and the steps with no
// dependencies are queued (local ones run at once). Start may be called
// again after Done or after a failure (the caller must have cancelled what
// was in flight); completions of an earlier call are then ignored.
func (m *Machine) Start() error {
	// The call number stays below 2^31 (and above 0), so a token never has
	// its top bit set: transports may mark their own operations with it.
	m.epoch = m.epoch%(1<<31-1) + 1
	m.started = true
	m.err = nil
	m.remaining = len(m.prog.Steps)
	m.inFlight = 0
	m.recvs, m.sends, m.work = m.recvs[:0], m.sends[:0], m.work[:0]
	m.workCopy, m.workReduce = 0, 0
	copy(m.pending, m.initPending)
	clear(m.state)
	for id := range m.pending {
		if m.pending[id] == 0 && m.state[id] == stWaiting {
			m.enqueue(int32(id))
		}
	}
	if !m.deferLocal {
		m.drain()
	}
	return m.err
}

// RunLocal runs one ready local step, if any (on a Machine whose local
// steps are deferred, see Run), and reports whether it ran one. Sends and
// receives that it makes ready appear in the next Ready.
func (m *Machine) RunLocal() (bool, error) {
	if m.err != nil || len(m.work) == 0 {
		return false, m.err
	}
	m.runLocal()
	return true, m.err
}

// Ready returns the operations to post since the last call. The caller
// must post all of them, in order, before calling Step again.
func (m *Machine) Ready() Ready {
	r := Ready{Recvs: m.recvs, Sends: m.sends}
	m.recvs, m.sends = m.recvs[:0], m.sends[:0]
	return r
}

// Done reports whether every step of the current call has completed.
func (m *Machine) Done() bool { return m.started && m.remaining == 0 }

// Err returns the error that stopped the current call, if any.
func (m *Machine) Err() error { return m.err }

// InFlight is the number of posted operations (and running asynchronous
// local steps, a batch counting once) not yet completed.
func (m *Machine) InFlight() int { return m.inFlight }

// Token is the token of step id in the current call: the call number in
// the high 32 bits (never 0, top bit never set), the step id in the low 32.
func (m *Machine) Token(id int) uint64 { return uint64(m.epoch)<<32 | uint64(uint32(id)) }

// Step feeds one completion. Completions of an earlier call (a stale
// epoch in the token) are ignored. A failed operation, a receive of the
// wrong length or a token that is not in flight stops the call with a
// *StepError, which Step returns then and on every later call.
func (m *Machine) Step(c Completion) error {
	if m.err != nil {
		return m.err
	}
	if uint32(c.Token>>32) != m.epoch {
		return nil
	}
	id := int(uint32(c.Token))
	if id >= len(m.state) || m.state[id] != stInFlight {
		m.err = fmt.Errorf("exec: rank %d %s: completion with token %#x names no operation in flight", m.prog.Rank, m.callName(), c.Token)
		return m.err
	}
	s := &m.prog.Steps[id]
	if c.Err != nil {
		m.err = m.failStep(id, c.Err)
		return m.err
	}
	if s.Op == sched.OpRecv && c.Len != s.Len {
		m.err = m.failStep(id, fmt.Errorf("received %d bytes, posted %d", c.Len, s.Len))
		return m.err
	}
	m.inFlight--
	if m.batchNext != nil && (s.Op == sched.OpCopy || s.Op == sched.OpReduce) && m.batchNext[id] != notBatched {
		m.completeBatch(int32(id))
	} else {
		m.complete(int32(id))
	}
	if !m.deferLocal {
		m.drain()
	}
	return m.err
}

// enqueue makes a step whose counter reached zero ready: sends and
// receives go to the batch (and release the next step of their tag chain),
// local steps to the work list.
func (m *Machine) enqueue(id int32) {
	for id >= 0 {
		s := &m.prog.Steps[id]
		m.state[id] = stReady
		switch s.Op {
		case sched.OpSend:
			m.sends = append(m.sends, Post{Step: int(id), Peer: int(s.Peer), Tag: uint32(s.Tag),
				Buf: m.bufs.Of(s.SrcBuf).Slice(s.SrcOff, s.Len), Token: m.Token(int(id)), Path: s.Path})
		case sched.OpRecv:
			m.recvs = append(m.recvs, Post{Step: int(id), Peer: int(s.Peer), Tag: uint32(s.Tag),
				Buf: m.bufs.Of(s.DstBuf).Slice(s.DstOff, s.Len), Token: m.Token(int(id))})
		default:
			m.work = append(m.work, id)
			if s.Op == sched.OpCopy {
				m.workCopy++
			} else {
				m.workReduce++
			}
			return
		}
		m.state[id] = stInFlight
		m.inFlight++
		next := m.nextSame[id]
		if next < 0 {
			return
		}
		m.pending[next]--
		if m.pending[next] != 0 {
			return
		}
		id = next
	}
}

// complete marks a step done and releases its dependents.
func (m *Machine) complete(id int32) {
	m.state[id] = stDone
	m.remaining--
	for _, d := range m.depList[m.depOff[id]:m.depOff[id+1]] {
		m.pending[d]--
		if m.pending[d] == 0 {
			m.enqueue(d)
		}
	}
}

// drain runs ready local steps until none is left.
func (m *Machine) drain() {
	for len(m.work) > 0 && m.err == nil {
		m.runLocal()
	}
}

// runLocal runs the last queued local step (m.work is not empty), or,
// where the executor runs batches and at least BatchMin copies are
// queued, every queued copy as one batch, and likewise the queued
// reductions where it runs batches of those (BatchReduce).
func (m *Machine) runLocal() {
	if m.batch != nil && m.workCopy >= BatchMin {
		m.runBatch(sched.OpCopy)
		return
	}
	if m.batchReduce && m.workReduce >= BatchMin {
		m.runBatch(sched.OpReduce)
		return
	}
	id := m.work[len(m.work)-1]
	m.work = m.work[:len(m.work)-1]
	s := &m.prog.Steps[id]
	if s.Op == sched.OpCopy {
		m.workCopy--
	} else {
		m.workReduce--
	}
	dst := m.bufs.Of(s.DstBuf).Slice(s.DstOff, s.Len)
	src := m.bufs.Of(s.SrcBuf).Slice(s.SrcOff, s.Len)
	if s.Op == sched.OpCopy && dst.Mem() == src.Mem() && dst.Addr() == src.Addr() {
		// A copy onto itself (a bcast root's, in place, whose Src is its
		// Dst) moves nothing, and a device copy between overlapping
		// ranges is not one the drivers define.
		m.complete(id)
		return
	}
	if m.local == nil {
		// Host buffers only (check): the host path inline.
		if s.Op == sched.OpCopy {
			copy(dst.host, src.host)
		} else {
			m.kernel(dst.host, src.host)
		}
		m.complete(id)
		return
	}
	m.localOp = LocalOp{Step: int(id), Token: m.Token(int(id)), Kind: s.Op, Dst: dst, Src: src, Dtype: m.cfg.Dtype, Op: m.cfg.Op}
	done, err := m.local.Local(&m.localOp)
	if err != nil {
		m.err = m.failStep(int(id), err)
		return
	}
	if done {
		m.complete(id)
	} else {
		m.state[id] = stInFlight
		m.inFlight++
		if m.batchNext != nil {
			m.batchNext[id] = notBatched
		}
	}
}

// runBatch hands every queued step of kind (sched.OpCopy or
// sched.OpReduce) to the BatchLocal as one batch, in the work list's
// order (the other queued steps stay queued), chained from its first
// step; the batch counts as one operation in flight. The steps are
// independent (BatchLocal says why), so one device operation may run
// them in any order.
//
// Per step this is a link in the chain and a state: the batch goes over
// as step ids (Batch), and the executor reads each step's buffer and
// offsets from the program itself. Where every queued step is of kind
// (a dispatch's copies, a combine's level of reductions) the work list
// itself becomes the batch, trading places with batchIDs (both hold
// every step), so the steps are not even filtered.
func (m *Machine) runBatch(kind sched.StepOp) {
	queued, what := &m.workCopy, "copies"
	if kind == sched.OpReduce {
		queued, what = &m.workReduce, "reductions"
	}
	var ids []int32
	if *queued == len(m.work) {
		ids, m.work = m.work, m.batchIDs[:0]
	} else {
		keep := m.work[:0]
		ids = m.batchIDs[:0]
		for _, id := range m.work {
			if m.prog.Steps[id].Op != kind {
				keep = append(keep, id)
				continue
			}
			ids = append(ids, id)
		}
		m.work = keep
	}
	m.batchIDs, *queued = ids, 0
	// The chain, and every step but the first marked as batched (where
	// the batch fails the call stops; where it is done at once
	// completeBatch marks every step done).
	for i := 0; i < len(ids)-1; i++ {
		m.batchNext[ids[i]] = ids[i+1]
		m.state[ids[i+1]] = stBatched
	}
	first := ids[0]
	m.batchNext[ids[len(ids)-1]] = batchEnd
	m.batchArg = Batch{Token: m.Token(int(first)), Kind: kind, Dtype: m.cfg.Dtype, Op: m.cfg.Op, Prog: m.prog, Bufs: &m.bufs, Steps: ids}
	done, err := m.batch.LocalBatch(&m.batchArg)
	m.batchArg.Steps = nil
	if err != nil {
		m.err = m.failStep(int(first), fmt.Errorf("batch of %d %s: %w", len(ids), what, err))
		return
	}
	if done {
		m.completeBatch(first)
		return
	}
	m.state[first] = stInFlight
	m.inFlight++
}

// completeBatch completes every step of the batch that starts at first:
// complete's work per step, with the arrays it touches held in locals
// (enqueue appends to the Machine's lists but never replaces these), so
// the loop does not reload them from m around each call; that is about a
// seventh of a batched MoE call's host time (BenchmarkMoEBatches).
func (m *Machine) completeBatch(first int32) {
	state, next, depOff, depList, pending := m.state, m.batchNext, m.depOff, m.depList, m.pending
	n := 0
	for id := first; id != batchEnd; id = next[id] {
		state[id] = stDone
		n++
		for _, d := range depList[depOff[id]:depOff[id+1]] {
			pending[d]--
			if pending[d] == 0 {
				m.enqueue(d)
			}
		}
	}
	m.remaining -= n
}
