package team

import (
	"unsafe"

	"github.com/goring-hpc/goring/cexec"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
)

// UCC's meaning of a call's two buffers, in one place for the Go side:
// which of the caller's pointers hold the collective's input (src) and
// its output (dst).
//
//   - bcast: one buffer, input and output alike (dst, else src);
//   - not in place: src is the input, dst the output;
//   - in-place allgather: the input is the rank's own block of dst;
//   - in-place allreduce and reduce_scatter: dst holds the whole input,
//     and the output is all of it (allreduce) or the rank's block of it
//     (reduce_scatter: dst + rank*count elements).
//
// The engines that read every input before they write any result
// (package direct's two backends) run on these regions as they are. A sched
// program receives into its output while it still reads its input, so
// where the two overlap (inputInDst) the machine runs on a private copy
// of the input (machine.go). The C side's one definition of the same
// rule is cexec/layout.h: the C path's executor places each call with it,
// told which case a call is by cpathLayout, and the adapter's C path
// checks a call's pointers with it.

// place is the call's input and output at rank, srcLen and dstLen bytes
// (B bytes per rank: an allgather's and a reduce_scatter's block), as view
// sees the caller's memory. The caller has checked that the pointers it
// needs are there.
func place(a Args, rank int, B, srcLen, dstLen int64, view func(p unsafe.Pointer, n int64) exec.Region) (src, dst exec.Region) {
	switch {
	case a.Coll == coll.Bcast:
		buf := a.Dst
		if buf == nil {
			buf = a.Src
		}
		return view(buf, srcLen), view(buf, dstLen)
	case !a.InPlace:
		return view(a.Src, srcLen), view(a.Dst, dstLen)
	case a.Coll == coll.Allgather:
		dst = view(a.Dst, dstLen)
		return dst.Slice(int64(rank)*B, B), dst
	case a.Coll == coll.ReduceScatter:
		src = view(a.Dst, srcLen)
		return src, src.Slice(int64(rank)*B, B)
	}
	src = view(a.Dst, srcLen) // an allreduce in place
	return src, src.Slice(0, dstLen)
}

// inputInDst says the call's input and output overlap in dst: an
// allreduce or reduce_scatter in place.
func inputInDst(a Args) bool {
	return a.InPlace && (a.Coll == coll.Allreduce || a.Coll == coll.ReduceScatter)
}

// cpathLayout is place's case of a call as the C executor names it
// (cexec.Layout; dstShift: the output is the rank's block of dst).
func cpathLayout(a Args) (layout cexec.Layout, dstShift bool) {
	switch {
	case a.Coll == coll.Bcast:
		return cexec.OneBuffer, false
	case a.InPlace && a.Coll == coll.Allgather:
		return cexec.SrcInDst, false
	case inputInDst(a):
		return cexec.CopyIn, a.Coll == coll.ReduceScatter
	}
	return cexec.Plain, false
}
