package exec

import (
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/reduce"
	"github.com/goring-hpc/goring/sched"
)

// LocalOp is a copy or reduce step handed to a LocalExecutor. Dst and Src
// are the validated slices of the rank's buffers (same length).
type LocalOp struct {
	Step  int
	Token uint64
	Kind  sched.StepOp // sched.OpCopy or sched.OpReduce
	Dst   []byte
	Src   []byte
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
	if op.Kind == sched.OpCopy {
		copy(op.Dst, op.Src)
		return true, nil
	}
	f, err := reduce.Kernel(op.Dtype, op.Op)
	if err != nil {
		return true, err
	}
	f(op.Dst, op.Src)
	return true, nil
}
