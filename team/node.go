package team

import (
	"errors"
	"fmt"
	"os"
	"time"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/devsync"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/nodeexec"
	"github.com/goring-hpc/goring/sched"
)

// Node collectives: on a team whose ranks run on one host, one GPU each,
// an allreduce, reduce_scatter or allgather of CUDA buffers whose data fits
// the team's scratch slots runs as one kernel per rank that the GPUs
// synchronise among themselves (package nodeexec), instead of the
// messages of sched's program, where each step is a host round trip.
//
// The scratch regions are made on the team's first such call, never at
// its creation: each rank allocates its region, and the ranks exchange
// their cards (IPC handle, slot size, GPU) in a host allgather that runs
// as that call's first part; then every rank maps the others' regions and
// the ranks agree, in a second allgather, that every mapping worked. If
// they cannot (a GPU shared by two ranks, a mapping refused), every rank
// learns it at the same call, runs it as messages, and the team's node
// path stays off. Kernels wait on flags that only peers set: while one
// runs, the team's watch checks the peers' processes, and a dead peer
// sets the abort word, which ends every wait (the call fails naming it).

// nodeState is a team's node path.
type nodeState struct {
	local *nodeexec.Local // nil until the first node call has set it up
	ready bool            // every rank mapped every region
	off   error           // why the team runs no node calls (nil: it may)
	stats nodeStats
	// The caller's stream of the last call posted on one (PostOn),
	// wrapped, and its handle.
	stream       *cuda.Stream
	streamHandle uintptr
}

// nodeStats is where a team's node calls spent their time on the host
// (printed at the team's end with GORING_NODE_STATS set: a diagnostic).
type nodeStats struct {
	calls          int
	onStream       int           // of calls, those on the caller's stream (PostOn)
	launch, finish time.Duration // in Begin; from Begin's return to the completion seen
}

// runsNode reports whether a call runs as a node kernel: CUDA buffers,
// in place or not (every kernel block writes an element of its output
// only after it has read that element of its input itself, and a peer
// reads a rank's slot, never its input: cuda/kernels/node.cu), no
// algorithm named, a team of 2 to 8 ranks on one host with a GPU each, data
// that fits the slots (an allreduce or reduce_scatter of any size: they
// run in pieces that do; an allgather or bcast up to a slot), and no
// measured row of goring's choice that runs the messages there instead
// (choose.Row.OverNode). Every rank decides alike.
func (t *Team) runsNode(a Args, mem exec.Mem, B int64) bool {
	o := t.ctx.opts
	if !t.nodeCapable() || mem.IsHost() || a.Alg != "" || o.chosen[a.Coll] {
		return false
	}
	if t.choice(a.Coll, B, false).OverNode { // the messages measured faster here (choose.Row.OverNode)
		return false
	}
	switch a.Coll {
	case coll.Allreduce, coll.ReduceScatter:
		// Any size: one too large for a slot runs in pieces that fit
		// (nodeexec/pieces.go), given room for a vector per rank.
		return coll.Supports(a.Op, a.Dtype) && o.nodeMax >= int64(t.size*devsync.Align)
	case coll.Allgather, coll.Bcast:
		// Only what fits one slot: beyond, the push engine's copies
		// (allgather: neighbor) leave the SMs to the user.
		s := devsync.Shape{Alg: devsync.Allgather, Ranks: t.size, Count: int(B), ElemSize: 1}
		if a.Coll == coll.Bcast {
			s.Alg = devsync.Bcast
		}
		return int64(s.SlotBytes()) <= o.nodeMax
	}
	return false
}

// nodeCapable says whether the team's CUDA calls can run as node kernels
// (runsNode's conditions that do not depend on the call). A reason to
// stop that only this rank knows (its regions could not be made, or its
// card) counts once the set-up exchange has made every rank know it
// (ready): before, this rank keeps choosing node runners as its peers do,
// whose set-up then fails on every rank alike. Otherwise a call made
// after that failure and posted before the first one (persistent calls
// may be posted in another order than they were made) would run as
// messages here and as node kernels on the peers.
func (t *Team) nodeCapable() bool {
	return t.mayRunNode() && t.engine != nil && (t.node == nil || t.node.off == nil || !t.node.ready)
}

// mayRunNode says whether the team's shape and options allow node calls
// at all: one host, a GPU of its own each, 2 to devsync.MaxRanks ranks,
// the node kernels and IPC not turned off. What the cards tell at
// creation decides it, so a team that cannot run them need not load
// them (loadKernels).
func (t *Team) mayRunNode() bool {
	o := t.ctx.opts
	return o.nodeMax > 0 && !o.noIPC && t.oneHost && (!t.sharedGPU || nodeOnSharedGPU) && t.size >= 2 && t.size <= devsync.MaxRanks
}

// nodeOnSharedGPU lets a team whose ranks share one GPU run node kernels:
// set only by this package's tests, to drive the node path (set-up
// exchanges, done words, the watch's abort) on a machine of one GPU. The
// ranks' kernels are then in separate processes on one GPU, which the
// driver runs in turns (time slices), each spinning through its turn for
// peers not running; their speed was never measured, and a team whose
// ranks share a GPU runs the shared-GPU leader instead (onedevice.go).
var nodeOnSharedGPU bool

// nodeRunner is a node call: the kernel's call, the set-up exchange
// while one runs (on a Machine of its own), and the watch's timing.
type nodeRunner struct {
	c        *Coll
	call     nodeexec.Call
	setup    *nodeSetup
	m        *exec.Machine // the set-up exchange's
	exchange exec.Call
	checked  time.Time // the watch's last check while the kernel runs
	launched time.Time // when the kernel was launched
	// deadline is the call's (timeout_ms; zero: none), fixed when the
	// call begins: the kernel's flags wait on peers the host cannot
	// see, so the host checks it while it polls.
	deadline time.Time
	// polls counts checkPeers's polls without a deadline (its clock).
	polls uint
	// on is the caller's stream for the post in progress (PostOn); nil:
	// the team's own. Taken, and cleared, by the launch.
	on *cuda.Stream
	// prepOnly: this post runs the team's set-up exchanges and ends
	// without a kernel, the data untouched (PrepareStream); prepDone: it
	// has nothing left to run.
	prepOnly, prepDone bool
}

// nodeSetup is the team's first node call's exchanges: every rank's card,
// then every rank's verdict on mapping the others' regions.
type nodeSetup struct {
	phase     int // 1: cards, 2: verdicts
	mine, all []byte
	slot      int // the card slot of phase 1
}

// newNodeRunner prepares a node call: B is an allreduce's or a bcast's
// vector, a reduce_scatter's output block, an allgather's input block.
func newNodeRunner(k *Call) (Runner, error) {
	c, a, B := k.coll, k.Args, k.bytes
	t := c.team
	if a.Coll == coll.Bcast && a.Src == nil && a.Dst == nil || a.Coll != coll.Bcast && (a.Dst == nil || (!a.InPlace && a.Src == nil)) {
		return nil, Invalid("%s: missing buffer", a.Coll)
	}
	srcLen, dstLen := B, B
	switch a.Coll {
	case coll.Allgather:
		dstLen = int64(t.size) * B
	case coll.ReduceScatter:
		srcLen = int64(t.size) * B
	}
	view := func(p unsafe.Pointer, n int64) exec.Region { return deviceRegion(k.mem, p, n) }
	src, dst := place(a, t.rank, B, srcLen, dstLen, view)
	count := int(B) / a.Dtype.Size()
	r := &nodeRunner{c: c, call: nodeexec.Call{Collective: a.Coll, Dtype: a.Dtype, Op: a.Op, Count: count,
		In: cuda.DevicePtr(src.Addr()), Out: cuda.DevicePtr(dst.Addr()), Root: a.Root}}
	if t.node == nil {
		t.node = &nodeState{}
		l, err := nodeexec.New(c.gpu.g.Device(), t.rank, t.size, int(t.ctx.opts.nodeMax))
		if err != nil {
			// This rank cannot: it says so in the exchange, and every
			// rank runs the call as messages.
			t.node.off = err
		} else {
			l.SetLinger(t.ctx.opts.nodeLinger)
			l.SetLLMax(int(t.ctx.opts.nodeLL))
		}
		t.node.local = l
	}
	if !t.node.ready {
		r.setup = &nodeSetup{phase: 1}
	}
	c.alg = "node_" + nodeAlgName(t, r.call)
	return r, nil
}

func nodeAlgName(t *Team, call nodeexec.Call) string {
	if t.node != nil && t.node.local != nil {
		return t.node.local.Algorithm(call)
	}
	return "kernel"
}

// setupMachine is an allgather of one slot of bytes per rank, from mine,
// on the host, run with the team's messages.
func (c *Coll) setupMachine(mine []byte, slot int) (*exec.Machine, []byte, error) {
	t := c.team
	src := c.alloc(int64(slot))
	copy(src, mine)
	all := c.alloc(int64(slot * t.size))
	spec := sched.Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: t.topo, Bytes: int64(slot), DtypeBytes: 1}
	entry, err := t.plans.get(spec, t.rank, coll.Uint8, coll.OpInvalid, exec.Host)
	if err != nil {
		return nil, nil, invalidErr{err}
	}
	prog := entry.program(t.rank)
	b := exec.Buffers{Src: exec.HostRegion(src), Dst: exec.HostRegion(all)}
	if z := prog.Sizes.Scratch; z > 0 {
		b.Scratch = exec.HostRegion(c.alloc(z))
	}
	m, err := exec.New(prog, b, exec.ConfigFor(entry.plan, coll.DtypeInvalid, coll.OpInvalid))
	if err != nil {
		return nil, nil, invalidErr{err}
	}
	return m, all, nil
}

// nodeCardSlot bounds a node card (nodeexec's card: magic, slot size, IPC
// handle, PCI bus id).
const nodeCardSlot = 128

// Begin starts the team's set-up exchange if no earlier call ran it, else
// the kernel; where the team's node path is off, the call runs as
// messages.
func (r *nodeRunner) Begin() error {
	t := r.c.team
	r.deadline = t.deadline()
	if t.node.off != nil && t.node.ready {
		if r.prepOnly {
			r.prepDone = true // nothing to set up: the call runs as messages
			return nil
		}
		return fallBack(t.node.off)
	}
	if r.setup != nil && t.node.ready {
		r.setup = nil // an earlier call of the team set it up
	}
	if s := r.setup; s != nil {
		card := []byte{}
		if t.node.local != nil && t.node.off == nil {
			var err error
			if card, err = t.node.local.Card(); err != nil {
				t.node.off, card = err, []byte{}
			}
		}
		if len(card) > nodeCardSlot-1 {
			t.node.off, card = fmt.Errorf("node card of %d bytes", len(card)), []byte{}
		}
		// The first byte says whether the rank has a card at all.
		mine := append([]byte{byte(min(len(card), 1))}, card...)
		return r.beginSetup(mine, nodeCardSlot)
	}
	if r.prepOnly {
		r.prepDone = true
		return nil
	}
	return r.launch()
}

// beginSetup puts one set-up allgather on the wire.
func (r *nodeRunner) beginSetup(mine []byte, slot int) error {
	m, all, err := r.c.setupMachine(mine, slot)
	if err != nil {
		return err
	}
	r.setup.all, r.setup.slot, r.m = all, slot, m
	tr, watch, deadline := r.c.team.nextCall()
	r.exchange.SetWatch(watch)
	return r.exchange.Begin(m, tr, deadline)
}

// launch starts the kernel.
func (r *nodeRunner) launch() error {
	t := r.c.team
	r.setup = nil
	t0 := time.Now()
	on := r.on
	r.on = nil
	if on != nil {
		t.node.stats.onStream++
	}
	err := t.node.local.BeginOn(r.call, on)
	// The watch's first look comes a watch interval after the launch: a
	// look costs a /proc read per peer, more than a small call.
	r.launched = time.Now()
	r.checked = r.launched
	t.node.stats.launch += r.launched.Sub(t0)
	t.node.stats.calls++
	return err
}

// Progress progresses a node call: its set-up exchanges, then the kernel.
func (r *nodeRunner) Progress() (bool, error) {
	t := r.c.team
	if r.prepDone {
		return true, nil
	}
	if s := r.setup; s != nil {
		done, err := r.exchange.Progress(time.Time{})
		if err != nil || !done {
			return done, err
		}
		switch s.phase {
		case 1:
			cards := make([][]byte, t.size)
			verdict := byte(1)
			for q := range cards {
				b := s.all[q*s.slot : (q+1)*s.slot]
				if b[0] == 0 {
					verdict = 0
				}
				cards[q] = b[1:]
			}
			if verdict == 1 {
				if err := nodeexec.Agree(cards, t.size, nodeOnSharedGPU); err != nil {
					verdict, t.node.off = 0, err
				} else if err := t.node.local.Open(cards, nodeOnSharedGPU); err != nil {
					verdict, t.node.off = 0, err
				}
			}
			s.phase = 2
			return false, r.beginSetup([]byte{verdict}, 1)
		case 2:
			t.node.ready = true
			for q := 0; q < t.size; q++ {
				if s.all[q] == 0 && t.node.off == nil {
					t.node.off = fmt.Errorf("rank %d could not map the node regions", q)
				}
			}
			if t.node.off != nil {
				_ = t.closeNode() // its regions serve nothing now
				if r.prepOnly {
					r.setup = nil
					return true, nil
				}
				return false, fallBack(t.node.off)
			}
			if r.prepOnly {
				r.setup = nil
				return true, nil
			}
			if err := r.launch(); err != nil {
				return false, err
			}
		}
	}
	done, err := t.node.local.Progress()
	if err == nil && !done {
		err = r.checkPeers()
	}
	if done && err == nil {
		t.node.stats.finish += time.Since(r.launched)
	}
	return done, err
}

// checkPeers ends a kernel that waits past the call's deadline or on a
// peer the watch finds dead: the abort word ends every wait in it, and
// the team's node path ends with it (its flags are out of step).
func (r *nodeRunner) checkPeers() error {
	t := r.c.team
	var cause error
	// The clock, which every poll read (1.2 us a call of 16 KiB through
	// UCC, over its polls): on every poll while a deadline is armed, so that it
	// is late by no poll; without one, only for the watch, whose look is
	// due every half second, every nodeClockEvery polls. And one
	// monotonic read (time.Since), not time.Now's two: only the
	// monotonic clock is compared.
	if r.deadline.IsZero() {
		if t.watch == nil {
			return nil
		}
		if r.polls++; r.polls%nodeClockEvery != 0 {
			return nil
		}
	}
	now := r.launched.Add(time.Since(r.launched))
	if !r.deadline.IsZero() && !now.Before(r.deadline) {
		cause = fmt.Errorf("node kernel %s still waiting for its peers after timeout_ms=%d: %w",
			r.c.alg, t.ctx.opts.timeout.Milliseconds(), exec.ErrDeadline)
	} else if t.watch != nil && now.Sub(r.checked) >= t.watch.Every() {
		r.checked = now
		cause = t.watch.Check()
	}
	if cause == nil {
		return nil
	}
	t.node.off = cause
	return errors.Join(cause, t.node.local.Abort(cause))
}

// nodeClockEvery is how many polls of a node kernel without a deadline
// read the clock once, for the watch: its look comes at most that many
// polls late, microseconds in a caller's poll loop, against the half
// second between looks.
const nodeClockEvery = 16

// Abort stops a running node call (the call is withdrawn or the team
// destroyed): the team's node path ends with it.
func (r *nodeRunner) Abort(cause error) error {
	if r.setup != nil {
		return errors.Join(cause, r.exchange.Abort(cause))
	}
	t := r.c.team
	t.node.off = cause
	return errors.Join(cause, t.node.local.Abort(cause))
}

// closeNode releases the team's node regions.
func (t *Team) closeNode() error {
	if t.node == nil || t.node.local == nil {
		return nil
	}
	if st := t.node.stats; st.calls > 0 && os.Getenv("GORING_NODE_STATS") != "" {
		per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(st.calls) }
		fmt.Fprintf(os.Stderr, "goring node: rank %d of %d, %d calls (%d on the caller's stream, %d handed to a resident kernel), us per call: launch %.1f, launch to completion seen %.1f\n",
			t.rank, t.size, st.calls, st.onStream, t.node.local.Handed(), per(st.launch), per(st.finish))
	}
	err := t.node.local.Close()
	t.node.local, t.node.stream = nil, nil // the caller's stream stays the caller's
	return err
}
