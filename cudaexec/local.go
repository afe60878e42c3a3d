package cudaexec

import (
	"fmt"
	"time"

	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// Local runs a Machine's copy and reduce steps on the GPU: one stream, a
// copy (cuMemcpyDtoDAsync) or a reduction kernel per step, then an event;
// a batch of copies (exec.BatchLocal) is one copy-list kernel
// (cuda.CopyListAsync) and one event, a batch of reductions
// (exec.BatchReduce) one reduce-list kernel (cuda.ReduceListAsync) and
// one event.
// Steps the Machine starts together may run in any order by the program's
// rules; one stream runs them in the order started, which is one of them,
// and lets Poll stop at the first event not yet reached.
type Local struct {
	g       *GPU
	stream  *cuda.Stream
	pending []inFlight // in stream order
	free    []*cuda.Event
	descs   []cuda.CopyDesc // a batch's copies or reductions (reused)
	// Every is how often the driver looks for finished steps while some
	// run (exec.PollInterval; 0: exec.PollEvery).
	Every time.Duration
}

// InOrder implements exec.InOrder: one stream runs the steps in the
// order they were started.
func (l *Local) InOrder() bool { return true }

// PollInterval implements exec.PollInterval.
func (l *Local) PollInterval() time.Duration { return l.Every }

type inFlight struct {
	token uint64
	n     int64
	ev    *cuda.Event
}

var (
	_ exec.AsyncLocal  = (*Local)(nil)
	_ exec.BatchLocal  = (*Local)(nil)
	_ exec.BatchReduce = (*Local)(nil)
)

// Local makes an executor with a stream of its own (one per rank).
func (g *GPU) Local() (*Local, error) {
	s, err := g.dev.NewStream()
	if err != nil {
		return nil, err
	}
	return &Local{g: g, stream: s, Every: g.PollEvery}, nil
}

// Close waits for the stream and destroys it and the events.
func (l *Local) Close() error {
	err := l.stream.Synchronize()
	for _, p := range l.pending {
		l.free = append(l.free, p.ev)
	}
	l.pending = nil
	for _, e := range l.free {
		_ = e.Destroy()
	}
	l.free = nil
	if derr := l.stream.Destroy(); err == nil {
		err = derr
	}
	return err
}

// Local implements exec.LocalExecutor: the step is queued on the stream.
func (l *Local) Local(op *exec.LocalOp) (bool, error) {
	if op.Dst.Len() == 0 {
		return true, nil
	}
	if op.Dst.Mem().Kind != exec.MemCUDA || op.Src.Mem().Kind != exec.MemCUDA {
		return true, fmt.Errorf("cudaexec: %v of %v into %v: both sides must be CUDA memory", op.Kind, op.Src.Mem(), op.Dst.Mem())
	}
	dst, src := cuda.DevicePtr(op.Dst.Addr()), cuda.DevicePtr(op.Src.Addr())
	n := int(op.Dst.Len())
	var err error
	switch op.Kind {
	case sched.OpCopy:
		err = cuda.CopyAddrAsync(l.stream, dst, src, n)
	case sched.OpReduce:
		err = cuda.ReduceAddrAsync(l.stream, dst, src, n, op.Dtype, op.Op)
	default:
		err = fmt.Errorf("cudaexec: step op %v is not local", op.Kind)
	}
	if err != nil {
		return true, err
	}
	if err := l.record(op.Token, op.Dst.Len()); err != nil {
		return true, err
	}
	return false, nil
}

// BatchesReduce implements exec.BatchReduce: batches of reductions run
// as one reduce-list kernel.
func (l *Local) BatchesReduce() bool { return true }

// LocalBatch implements exec.BatchLocal: every copy of b in one
// copy-list kernel on the stream (after the upload of its list), or
// every reduction in one reduce-list kernel, then one event, which
// reports the batch's token.
//
// A step's descriptor is its buffer's address plus its offsets, read
// from the program (exec.Batch says why). What is checked: each step is
// of the batch's kind (copy or reduce) and lies inside its buffers, and
// every buffer a step of bytes reads or writes is CUDA memory; the
// memory is checked once per buffer after the loop, not per step. A
// step has one length, so its two sides cannot differ.
func (l *Local) LocalBatch(b *exec.Batch) (bool, error) {
	if len(b.Steps) == 0 {
		return true, nil
	}
	if b.Kind != sched.OpCopy && b.Kind != sched.OpReduce {
		return true, fmt.Errorf("cudaexec: a batch of %v", b.Kind)
	}
	// Indexed by sched.Buf; index 0 (no buffer) has size 0, so a step
	// that names no buffer fails the range check.
	var base [4]uintptr
	var size [4]int64
	for k := sched.BufSrc; k <= sched.BufScratch; k++ {
		r := b.Bufs.Of(k)
		base[k], size[k] = r.Addr(), r.Len()
	}
	steps := b.Prog.Steps
	d := l.descs[:0]
	var n int64
	var used uint8 // bit k: a step of bytes touches buffer k
	for _, id := range b.Steps {
		s := &steps[id]
		if s.Op != b.Kind {
			return true, fmt.Errorf("cudaexec: batch step %d: %v in a batch of %v", id, s.Op, b.Kind)
		}
		if s.Len == 0 {
			continue
		}
		db, sb := s.DstBuf&3, s.SrcBuf&3
		if db != s.DstBuf || sb != s.SrcBuf || !inside(s.DstOff, s.Len, size[db]) || !inside(s.SrcOff, s.Len, size[sb]) {
			return true, fmt.Errorf("cudaexec: batch step %d: %v[%d:+%d] from %v[%d:+%d] is outside its buffers", id, s.DstBuf, s.DstOff, s.Len, s.SrcBuf, s.SrcOff, s.Len)
		}
		used |= 1<<db | 1<<sb
		d = append(d, cuda.CopyDesc{Dst: cuda.DevicePtr(base[db] + uintptr(s.DstOff)), Src: cuda.DevicePtr(base[sb] + uintptr(s.SrcOff)), Bytes: int(s.Len)})
		n += s.Len
	}
	l.descs = d
	for k := sched.BufSrc; k <= sched.BufScratch; k++ {
		if used&(1<<k) != 0 && b.Bufs.Of(k).Mem().Kind != exec.MemCUDA {
			return true, fmt.Errorf("cudaexec: a batch of %v with the %v buffer on %v: both sides must be CUDA memory", b.Kind, k, b.Bufs.Of(k).Mem())
		}
	}
	if len(d) == 0 {
		return true, nil
	}
	var err error
	if b.Kind == sched.OpCopy {
		err = cuda.CopyListAsync(l.stream, d)
	} else {
		err = cuda.ReduceListAsync(l.stream, d, b.Dtype, b.Op)
	}
	if err != nil {
		return true, err
	}
	if err := l.record(b.Token, n); err != nil {
		return true, err
	}
	return false, nil
}

// inside reports whether [off, off+n) lies in a buffer of size bytes.
func inside(off, n, size int64) bool { return off >= 0 && off <= size && n <= size-off }

// LocalMulti implements exec.MultiLocal: one multi kernel on the stream.
func (l *Local) LocalMulti(op *exec.MultiOp) (bool, error) {
	if len(op.Dsts) == 0 || len(op.Srcs) == 0 {
		return true, fmt.Errorf("cudaexec: a multi step of %d sources and %d destinations", len(op.Srcs), len(op.Dsts))
	}
	n := op.Dsts[0].Len()
	if n == 0 {
		return true, nil
	}
	var dsts, srcs [cuda.MultiMax]cuda.DevicePtr
	if len(op.Dsts) > len(dsts) || len(op.Srcs) > len(srcs) {
		return true, fmt.Errorf("cudaexec: a multi step of %d sources and %d destinations, at most %d each", len(op.Srcs), len(op.Dsts), cuda.MultiMax)
	}
	err := multiAddrs(srcs[:], op.Srcs, n, "source")
	if err == nil {
		err = multiAddrs(dsts[:], op.Dsts, n, "destination")
	}
	if err != nil {
		return true, err
	}
	switch {
	case op.Kind == sched.OpCopy && len(op.Srcs) == 1:
		err = cuda.CopyMultiAddrAsync(l.stream, dsts[:len(op.Dsts)], srcs[0], int(n))
	case op.Kind == sched.OpReduce:
		err = cuda.ReduceMultiAddrAsync(l.stream, dsts[:len(op.Dsts)], srcs[:len(op.Srcs)], int(n), op.Dtype, op.Op)
	default:
		err = fmt.Errorf("cudaexec: multi step %v of %d sources", op.Kind, len(op.Srcs))
	}
	if err != nil {
		return true, err
	}
	if err := l.record(op.Token, n); err != nil {
		return true, err
	}
	return false, nil
}

// multiAddrs puts the device addresses of rs into into, each checked to
// be n bytes of CUDA memory.
func multiAddrs(into []cuda.DevicePtr, rs []exec.Region, n int64, what string) error {
	for i, r := range rs {
		if r.Mem().Kind != exec.MemCUDA || r.Len() != n {
			return fmt.Errorf("cudaexec: multi step %s %v: want %d bytes of CUDA memory", what, r, n)
		}
		into[i] = cuda.DevicePtr(r.Addr())
	}
	return nil
}

// record queues an event after the step just launched: Poll reports the
// step done when the stream reaches it.
func (l *Local) record(token uint64, n int64) error {
	ev, err := l.event()
	if err != nil {
		return err
	}
	if err := ev.Record(l.stream); err != nil {
		l.free = append(l.free, ev)
		return err
	}
	l.pending = append(l.pending, inFlight{token: token, n: n, ev: ev})
	return nil
}

func (l *Local) event() (*cuda.Event, error) {
	if k := len(l.free); k > 0 {
		e := l.free[k-1]
		l.free = l.free[:k-1]
		return e, nil
	}
	return l.g.dev.NewEvent(false)
}

// Pending implements exec.AsyncLocal.
func (l *Local) Pending() int { return len(l.pending) }

// Poll implements exec.AsyncLocal: steps whose events are done, in order.
func (l *Local) Poll(dst []exec.Completion) []exec.Completion {
	k := 0
	for ; k < len(l.pending); k++ {
		p := l.pending[k]
		done, err := p.ev.Done()
		if !done && err == nil {
			break
		}
		dst = append(dst, exec.Completion{Token: p.token, Len: p.n, Err: err})
		l.free = append(l.free, p.ev)
	}
	if k > 0 {
		l.pending = append(l.pending[:0], l.pending[k:]...)
	}
	return dst
}

// Cancel implements exec.AsyncLocal: the step's completion is dropped once
// the device has finished it (queued work cannot be withdrawn), so the
// buffers are free when Cancel returns.
func (l *Local) Cancel(token uint64) error {
	for i, p := range l.pending {
		if p.token == token {
			err := p.ev.Synchronize()
			l.free = append(l.free, p.ev)
			l.pending = append(l.pending[:i], l.pending[i+1:]...)
			return err
		}
	}
	return nil
}

// CopyNow copies src into dst (device memory, equal lengths) on the
// executor's stream and waits for it: for the few copies a caller needs
// before a call starts (the private source of an in-place allreduce).
func (l *Local) CopyNow(dst, src exec.Region) error {
	if dst.Len() != src.Len() {
		return fmt.Errorf("cudaexec: copy of %v into %v", src, dst)
	}
	if err := cuda.CopyAddrAsync(l.stream, cuda.DevicePtr(dst.Addr()), cuda.DevicePtr(src.Addr()), int(dst.Len())); err != nil {
		return err
	}
	return l.stream.Synchronize()
}
