package nodeexec

import (
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/devsync"
)

// LL calls (devsync/ll.go): a small one-shot allreduce, reduce_scatter or
// allgather moves its data in tagged lines instead of a slot and flags:
// a reader uses each line as soon as it lands, with no flag to wait for
// and no fence before it, at twice the bytes over NVLink.

// DefaultLLMax is the largest call, in bytes a rank sends each peer (an
// allreduce's vector, a reduce_scatter's output block, an allgather's
// input), that runs in tagged lines by default: none yet. On two H200s
// LL calls of 16-32 KiB took 0.7-6.4 µs less than the flags' through
// UCC, but those kernels had every polling thread read the host's abort
// word every 64 polls, and a call whose peer was late took 30-240 µs
// (docs/gpu.md "Tagged lines for small node calls"). The kernels that
// read it every 8192 polls were faster than the flags' on every grid of
// the bench, but have not been timed through UCC. SetLLMax turns them
// on.
const DefaultLLMax = 0

// SetLLMax sets the largest LL call (DefaultLLMax unless set), in bytes
// a rank sends each peer; beyond it, and where the lines would not fit
// the LL area (devsync.LLAreaBytes), the slots and flags. 0: none.
func (l *Local) SetLLMax(n int) { l.llMax = max(n, 0) }

// llShape is s as an LL call where one may run it: the same collective
// (a one-shot allreduce, a reduce_scatter, an allgather), up to llMax
// bytes a rank, in whole 8-byte words that fit the LL area. Every rank
// decides the same: from the call's shape, never from its own buffers'
// addresses (the kernels take any alignment).
func (l *Local) llShape(s devsync.Shape) devsync.Shape {
	ll := s
	switch s.Alg {
	case devsync.OneShotAllreduce:
		ll.Alg = devsync.LLOneShotAllreduce
	case devsync.ReduceScatter:
		ll.Alg = devsync.LLReduceScatter
	case devsync.Allgather:
		ll.Alg = devsync.LLAllgather
	default:
		return s
	}
	check := ll
	check.Blocks = 1
	if s.Count*s.ElemSize > l.llMax || check.Validate() != nil {
		return s
	}
	return ll
}

// clearLL makes devsync.LLClearBefore's clear of this rank's LL area
// before its call e, on stream ahead of the call's kernel; it reports
// whether it did (then the call must be launched, not handed to a
// resident kernel, which would run before the clear).
func (l *Local) clearLL(stream *cuda.Stream, e devsync.Epoch) (bool, error) {
	parity, clear := devsync.LLClearBefore(e)
	if !clear {
		return false, nil
	}
	l.stopResident()
	return true, l.scratch.MemsetAsync(stream, devsync.LLOffset(parity), devsync.LLAreaBytes, 0)
}
