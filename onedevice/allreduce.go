package onedevice

import (
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// AllreducePlan is the leader allreduce over P ranks' buffers (srcs[r] and
// dsts[r], B bytes each; package sched's "leader" allreduce in messages):
//
//	dst0 = src0; dst0 op= src1; ...; dst0 op= src(P-1)   (rank order)
//	dst(r) = dst0 for r = 1..P-1
//
// Memory traffic: 2B + 3B(P-1) + 2B(P-1) bytes read and written, all by
// one context, where recursive doubling on P=4 processes moves about 12B
// per process in two turns of every process on the GPU. In place
// (src(r) == dst(r)) the first copy has nothing to do and the others read
// every input before any result is written: the copies wait for the last
// reduction.
//
// piece > 0 runs the plan piece by piece (piece bytes, a multiple of the
// element size): a piece of dst0 small enough to stay in the GPU's L2
// cache between its reductions and its copies out is read from memory
// once, not 2P-1 times. The pieces are independent of each other.
func AllreducePlan(srcs, dsts []exec.Region, piece int64) []Op {
	p, B := len(srcs), srcs[0].Len()
	if piece <= 0 || piece > B {
		piece = B
	}
	var ops []Op
	for off := int64(0); off < B; off += piece {
		n := min(piece, B-off)
		at := func(r exec.Region) exec.Region { return r.Slice(off, n) }
		last := -1
		if !same(srcs[0], dsts[0]) {
			ops = append(ops, Op{Kind: sched.OpCopy, Dst: at(dsts[0]), Src: at(srcs[0])})
			last = len(ops) - 1
		}
		for i := 1; i < p; i++ {
			ops = append(ops, Op{Kind: sched.OpReduce, Dst: at(dsts[0]), Src: at(srcs[i]), Deps: deps(last)})
			last = len(ops) - 1
		}
		for r := 1; r < p; r++ {
			ops = append(ops, Op{Kind: sched.OpCopy, Dst: at(dsts[r]), Src: at(dsts[0]), Deps: deps(last)})
		}
	}
	return ops
}

// deps is the dependency list of one earlier op (none for -1).
func deps(i int) []int {
	if i < 0 {
		return nil
	}
	return []int{i}
}
