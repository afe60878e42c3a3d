package cpumodel

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/goring-hpc/goring/devsync"
)

// StaleRead is a load of slot bytes that the reader's call did not store:
// data of an earlier call, of a later one, or never written.
type StaleRead struct {
	Rank, Block, Call int // the reader
	Owner, Off        int // whose slot, byte offset in it
	StoredBy          int // the call that stored the byte (-1: never)
}

func (s StaleRead) String() string {
	return fmt.Sprintf("rank %d block %d call %d read byte %d of rank %d's slot stored by call %d", s.Rank, s.Block, s.Call, s.Off, s.Owner, s.StoredBy)
}

// Result is what a run produced.
type Result struct {
	Outputs [][][]byte // [call][rank], at the end of the run
	// Seen is each output as the host read it when the rank's done words
	// said the call had ended (nil: they never did).
	Seen  [][][]byte
	Stale []StaleRead
	Errs  []error // waits that ended with an error (abort), one per agent at most
}

// ErrDeadlock is a run in which no agent could move, nothing was left to
// drain and no rank was dead: a plan waits for a signal nobody sends.
var ErrDeadlock = errors.New("cpumodel: deadlock")

// Run runs cfg.Calls calls back to back; inputs[call][rank] is each
// rank's input of each call.
func Run(cfg Config, inputs [][][]byte) (*Result, error) {
	if err := cfg.validate(inputs); err != nil {
		return nil, err
	}
	if cfg.DrainChance == 0 {
		cfg.DrainChance = 0.1
	}
	// The slots are as large as the largest call's (a team's slots are
	// sized for any call); every call's plans are made up front.
	ranks, slotBytes, llBytes, blocks := cfg.shape(0).Ranks, 0, 0, 0
	w := &world{cfg: cfg, inputs: inputs, rng: rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)), res: &Result{},
		plans: make([][][][]devsync.Step, cfg.Calls)}
	w.res.Outputs, w.res.Seen = make([][][]byte, cfg.Calls), make([][][]byte, cfg.Calls)
	for c := range w.res.Outputs {
		s := cfg.shape(c)
		slotBytes, blocks = max(slotBytes, s.SlotBytes()), max(blocks, s.Blocks)
		if s.Alg.LL() {
			llBytes = max(llBytes, s.Ranks*s.LLRegionBytes())
		}
		w.res.Outputs[c], w.res.Seen[c] = make([][]byte, ranks), make([][]byte, ranks)
		w.plans[c] = make([][][]devsync.Step, ranks)
		for r := range ranks {
			w.res.Outputs[c][r] = bytes.Repeat([]byte{0xee}, s.OutElems()*s.ElemSize) // never written: not the reference
			w.plans[c][r] = make([][]devsync.Step, s.Blocks)
			for b := range s.Blocks {
				steps, err := devsync.Plan(s, r, b)
				if err != nil {
					return nil, err
				}
				w.plans[c][r][b] = steps
			}
		}
	}
	w.mem = newMemory(ranks, slotBytes, llBytes)
	w.mem.outputs, w.seen = w.res.Outputs, make([]int, ranks)
	for r := range ranks {
		for b := range blocks {
			a := &agent{rank: r, block: b}
			a.steps = w.stepsOf(a)
			w.agents = append(w.agents, a)
		}
	}
	return w.res, w.loop()
}

// stepsOf is a's plan of its call: none where the call's grid has fewer
// blocks than a's (a has nothing to do, and stores no done word).
func (w *world) stepsOf(a *agent) []devsync.Step {
	if a.call >= w.cfg.Calls || a.block >= len(w.plans[a.call][a.rank]) {
		return nil
	}
	return w.plans[a.call][a.rank][a.block]
}

// world is one run's state.
type world struct {
	cfg    Config
	inputs [][][]byte
	mem    *memory
	rng    *rand.Rand
	agents []*agent
	plans  [][][][]devsync.Step // [call][rank][block]
	res    *Result
	seen   []int // per rank: the calls the host has seen end
}

// agent is one block of one rank.
type agent struct {
	rank, block int
	steps       []devsync.Step
	call, pc    int
	buf         []store
	stopped     bool // finished every call, died, or a wait failed
}

// epoch is the epoch the runner gives call.
func (w *world) epoch(call int) devsync.Epoch {
	if w.cfg.Mutation == ReuseEpoch {
		return devsync.FirstEpoch
	}
	return devsync.FirstEpoch + devsync.Epoch(call)
}

func (w *world) loop() error {
	for {
		var ready []*agent
		pending := 0
		for _, a := range w.agents {
			w.settle(a) // all first: a call's end makes stores visible to all
		}
		for _, a := range w.agents {
			pending += len(a.buf)
			if w.canStep(a) {
				ready = append(ready, a)
			}
		}
		switch {
		case len(ready) == 0 && pending > 0:
			w.drainOne()
		case len(ready) == 0 && w.stalled():
			if w.cfg.Dead >= 0 && w.mem.abort == 0 {
				// The host learns that the rank is gone (its process
				// exited, or the launcher said so) and tells every kernel.
				w.mem.abort = devsync.AbortWord(w.cfg.Dead)
				continue
			}
			return fmt.Errorf("%w: %s", ErrDeadlock, w.where())
		case len(ready) == 0:
			return nil
		case pending > 0 && w.rng.Float64() < w.cfg.DrainChance:
			w.drainOne()
		default:
			w.step(ready[w.rng.IntN(len(ready))])
		}
	}
}

// settle ends a call whose steps are all done and whose stores are all
// visible (a kernel is complete when its stores are performed; until then
// they drain like any others, so a flag stored last can still land before
// the data) and stops the agent where it dies or has run every call.
func (w *world) settle(a *agent) {
	if a.stopped {
		return
	}
	if a.pc == len(a.steps) && len(a.buf) == 0 {
		a.call, a.pc = a.call+1, 0
		a.steps = w.stepsOf(a)
	}
	if a.call == w.cfg.Calls || (a.rank == w.cfg.Dead && a.call >= w.cfg.DeadAtCall && a.pc == 0) {
		a.stopped = true
	}
}

// canStep: the agent has a step to run now. A call starts only when every
// block of the rank ended the previous one (stream order); a wait runs
// when its flags are in or the abort word is set.
func (w *world) canStep(a *agent) bool {
	if a.stopped || a.pc == len(a.steps) {
		return false
	}
	if a.pc == 0 {
		for _, b := range w.agents {
			if b.rank == a.rank && b.call < a.call {
				return false
			}
		}
	}
	st := a.steps[a.pc]
	if w.cfg.Mutation == SkipWait {
		return true
	}
	switch {
	case st.Kind == devsync.Wait:
		done, err := w.poll(a, st)
		return done || err != nil
	case st.Kind == devsync.Move:
		done, err := w.pollLL(a, st)
		return done || err != nil
	}
	return true
}

// stalled: some agent has calls left but cannot move.
func (w *world) stalled() bool {
	for _, a := range w.agents {
		if !a.stopped {
			return true
		}
	}
	return false
}

func (w *world) where() string {
	s := ""
	for _, a := range w.agents {
		if !a.stopped {
			s += fmt.Sprintf(" rank %d block %d at call %d step %d;", a.rank, a.block, a.call, a.pc)
		}
	}
	return s
}

// drainOne makes one buffered store of a random agent visible, picked at
// random in that agent's buffer: stores of one agent become visible in
// any order, but a release store only once it is the last one left.
func (w *world) drainOne() {
	var with []*agent
	for _, a := range w.agents {
		if len(a.buf) > 0 {
			with = append(with, a)
		}
	}
	a := with[w.rng.IntN(len(with))]
	i := w.rng.IntN(len(a.buf))
	if a.buf[i].release && len(a.buf) > 1 {
		i = (i + 1 + w.rng.IntN(len(a.buf)-1)) % len(a.buf) // another one: a release store is the only one it can be
	}
	w.apply(a.buf[i])
	a.buf = append(a.buf[:i], a.buf[i+1:]...)
}

// apply makes s visible; a done word's store lets the host look at the
// rank's done words (observe).
func (w *world) apply(s store) {
	w.mem.apply(s)
	if s.done {
		w.observe(s.rank)
	}
}

// observe is the host's look at rank's done words: each call, in order,
// whose every block's word holds its epoch has ended (devsync.Ended), and
// the host reads its output then (Result.Seen).
func (w *world) observe(rank int) {
	for c := w.seen[rank]; c < w.cfg.Calls; c++ {
		if !devsync.Ended(func(b int) uint64 { return w.mem.done[rank][b] }, w.cfg.shape(c).Blocks, w.epoch(c)) {
			return
		}
		w.res.Seen[c][rank] = append([]byte{}, w.res.Outputs[c][rank]...) // not nil for an empty output: nil is "never seen"
		w.seen[rank] = c + 1
	}
}
