package exec

import (
	"fmt"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/reduce"
	"github.com/goring-hpc/goring/sched"
)

// LocalOp is a copy or reduce step handed to a LocalExecutor. Dst and Src
// are the validated ranges of the rank's buffers (same length, each of
// its buffer's memory type).
type LocalOp struct {
	Step  int
	Token uint64
	Kind  sched.StepOp // sched.OpCopy or sched.OpReduce
	Dst   Region
	Src   Region
	Dtype coll.Dtype // for OpReduce
	Op    coll.Op    // for OpReduce
}

// LocalExecutor runs the copy and reduce steps of a program. The host one
// (HostLocal) runs them at once on the calling goroutine. A device one
// (copies and reduction kernels on a GPU stream) may instead start the work
// and return done == false; it must then deliver Completion{Token:
// op.Token} to the Machine later, typically through the same Wait that
// reports transport completions (a GPU transport polls its stream events
// there), so that dependent steps start.
//
// The *LocalOp is only valid during the call.
type LocalExecutor interface {
	Local(op *LocalOp) (done bool, err error)
}

// HostLocal runs copies with copy() and reductions with package reduce. Its
// zero value is ready to use; it keeps no state.
type HostLocal struct{}

// Local implements LocalExecutor. Kernel selection happens per call so a
// HostLocal can serve any dtype; the lookup does not allocate.
func (HostLocal) Local(op *LocalOp) (bool, error) {
	if !op.Dst.IsHost() || !op.Src.IsHost() {
		return true, fmt.Errorf("exec: host executor given %v -> %v memory", op.Src.Mem(), op.Dst.Mem())
	}
	if op.Kind == sched.OpCopy {
		copy(op.Dst.host, op.Src.host)
		return true, nil
	}
	f, err := reduce.Kernel(op.Dtype, op.Op)
	if err != nil {
		return true, err
	}
	f(op.Dst.host, op.Src.host)
	return true, nil
}

// MultiOp is a copy or reduction of several sources into several
// destinations in one step (one kernel): for every element, the sources
// reduced in order (((Srcs[0] op Srcs[1]) op ...); a copy has one source)
// and the result written to every destination. A destination may be a
// source. All regions have one length.
type MultiOp struct {
	Token uint64
	Kind  sched.StepOp // sched.OpCopy or sched.OpReduce
	Dsts  []Region
	Srcs  []Region
	Dtype coll.Dtype
	Op    coll.Op
}

// MultiMax is the most sources, and the most destinations, of one MultiOp.
const MultiMax = 8

// MultiLocal is a LocalExecutor that also runs MultiOps, completing them as
// it completes its other steps (at once, or through Poll). Package
// direct's device backend uses it (through LocalRun) where one process
// reduces every rank's buffer: each source is read once instead of once
// per pairwise step.
type MultiLocal interface {
	LocalExecutor
	LocalMulti(op *MultiOp) (done bool, err error)
}

// AsyncLocal is a LocalExecutor whose steps finish later (a GPU stream).
// The driver (Call) polls it for finished steps while it has Pending work,
// and then never sleeps in the transport longer than PollEvery, so device
// completions are seen as promptly as network ones without a host round
// trip per step.
type AsyncLocal interface {
	LocalExecutor
	// Poll appends a Completion for every step that finished since the
	// last Poll and returns dst.
	Poll(dst []Completion) []Completion
	// Pending is the number of started steps not yet reported by Poll.
	Pending() int
	// Cancel forgets the step with token: its completion will not be
	// reported (the work itself may still run to its end on the device;
	// Cancel returns once it no longer touches the buffers).
	Cancel(token uint64) error
}

// PollEvery bounds one transport wait while device work is pending, for an
// AsyncLocal that does not say otherwise (PollInterval). A reduction seen
// late holds back the step that sends its result: on two H100
// (docs/log/gpu-runs.md "Two GPUs (2026-11-25, 2×H100)", goring bench
// --device-poll) ring allreduce of 64 MiB in two
// pieces took 302.6 us polling every 20 us and 241.4 us every 2 us, and no
// size got slower beyond the run's scatter. The cost is a core polling
// while the GPU works, which a rank driving a GPU can spare.
const PollEvery = 2 * time.Microsecond

// PollIntervalOf is how often a driver looks for a's finished steps: its
// PollInterval where it has one above zero, else PollEvery.
func PollIntervalOf(a AsyncLocal) time.Duration {
	if p, ok := a.(PollInterval); ok && p.PollInterval() > 0 {
		return p.PollInterval()
	}
	return PollEvery
}

// PollInterval is what an AsyncLocal implements to choose its own bound
// instead of PollEvery (a value <= 0 keeps PollEvery): a device step that
// finished is seen up to that long late, and the next step that needs it
// starts that much later.
type PollInterval interface {
	PollInterval() time.Duration
}
