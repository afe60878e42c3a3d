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
func AllreducePlan(srcs, dsts []exec.Region) []Op {
	p := len(srcs)
	ops := make([]Op, 0, 2*p)
	last := -1
	if !same(srcs[0], dsts[0]) {
		ops = append(ops, Op{Kind: sched.OpCopy, Dst: dsts[0], Src: srcs[0]})
		last = 0
	}
	for i := 1; i < p; i++ {
		ops = append(ops, Op{Kind: sched.OpReduce, Dst: dsts[0], Src: srcs[i], Deps: deps(last)})
		last = len(ops) - 1
	}
	for r := 1; r < p; r++ {
		ops = append(ops, Op{Kind: sched.OpCopy, Dst: dsts[r], Src: dsts[0], Deps: deps(last)})
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
