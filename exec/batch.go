package exec

import (
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
)

// BatchLocal is a LocalExecutor that also runs many copy steps as one
// device operation: one kernel over a list of copies and one event, where
// Local would issue a copy and an event per step. A Machine hands it every
// group of at least BatchMin copy steps that are ready together, and,
// where it is a BatchReduce that says so, every such group of reduce
// steps (a batch is of one kind: all copies or all reductions); smaller
// groups, and the reductions of any other BatchLocal, still go one at a
// time through Local.
//
// Why a batch may run in any order, or all at once: its steps are ready
// together, so none depends on another, and a program that passes the
// sched verifier's race check has no two such steps where one writes
// bytes the other reads or writes (writes to one range, such as the
// reductions that accumulate into one row, are ordered by dependencies).
// So one kernel over independent descriptors gives the results of the
// steps run one by one, and the reductions into one range still run in
// the program's order, each in a later batch than the one before it:
// sums are bit-identical to the host's.
type BatchLocal interface {
	LocalExecutor
	// LocalBatch starts every step of b as one operation named b.Token.
	// done is as Local's: true when every step has finished during the
	// call; else the executor delivers one Completion{Token: b.Token}
	// once every step has finished, never before, and Cancel(b.Token)
	// withdraws the batch as a whole. b (and its Steps) is only valid
	// during the call.
	LocalBatch(b *Batch) (done bool, err error)
}

// Batch is a group of ready steps of one kind handed to a BatchLocal, in
// the form that costs the Machine least per step: the ids of the steps,
// with the program and the buffers they are read in. A batch of a large
// MoE call is thousands of steps, and building a LocalOp (two Regions)
// for each was most of a call's host time (docs/results.md, "Where the
// time goes now"); the executor instead reads each step's buffer, offset
// and length from the program, where they already are, and adds the
// buffer's address: for a device one step's descriptor is two additions.
//
// The Machine checked every step against the buffers (New, SetBuffers):
// ranges inside their buffers, kinds, reduce alignment. An executor
// still checks what it relies on that a bad Batch could get wrong (each
// step's Op is Kind, its memory types); it can do the memory check once
// per buffer the batch touches instead of once per step.
type Batch struct {
	Token uint64       // the batch's name: the token of Steps[0]
	Kind  sched.StepOp // sched.OpCopy or sched.OpReduce
	Dtype coll.Dtype   // for OpReduce
	Op    coll.Op      // for OpReduce
	Prog  *sched.RankProgram
	Bufs  *Buffers
	Steps []int32 // ids into Prog.Steps, every one of Op Kind
}

// Step is the i-th step of the batch.
func (b *Batch) Step(i int) *sched.Step { return &b.Prog.Steps[b.Steps[i]] }

// LocalOp is the i-th step as Local would be handed it (for an executor
// that runs a batch step by step, such as package fakedev's, and tests).
// Dst and Src are sliced from Bufs, so a step outside its buffer panics
// on host memory; the Machine never hands over one.
func (b *Batch) LocalOp(i int) LocalOp {
	id := b.Steps[i]
	s := &b.Prog.Steps[id]
	// The token of step id in the same call (Machine.Token): the call
	// number of b.Token's high half, the step id in the low.
	return LocalOp{Step: int(id), Token: uint64(b.Token>>32)<<32 | uint64(uint32(id)), Kind: s.Op,
		Dst: b.Bufs.Of(s.DstBuf).Slice(s.DstOff, s.Len), Src: b.Bufs.Of(s.SrcBuf).Slice(s.SrcOff, s.Len),
		Dtype: b.Dtype, Op: b.Op}
}

// BatchReduce is a BatchLocal that may also be handed batches of reduce
// steps: BatchesReduce, asked once when a Machine is built, says whether
// it takes them. A BatchLocal that is not a BatchReduce, or says false,
// is handed batches of copies only, and its reductions go through Local.
type BatchReduce interface {
	BatchLocal
	BatchesReduce() bool
}

// BatchMin is the fewest ready steps of one kind (copies, or reductions)
// a Machine hands a BatchLocal as one batch. A batch costs a device
// executor two operations (the upload of the list and one kernel) and
// one event, where single steps cost an operation and an event each
// (cudaexec.Local: about 7-9 us a step on an H200, docs/log/results-runs.md
// "MoE dispatch and combine on GPUs: the earlier runs"), so from three
// steps on a batch issues fewer operations; four leaves a margin for the
// list's upload. Not yet measured on a GPU.
const BatchMin = 4
