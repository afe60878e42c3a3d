package direct

import (
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// AllreducePlan is the leader allreduce over P ranks' buffers (srcs[r] and
// dsts[r], B bytes each; package sched's "leader" allreduce in messages),
// every element reduced in rank order, ((v0 op v1) op v2) op ..., so all
// ranks get the bits of a serial loop.
//
// Fused (fuse >= 2, an executor with exec.MultiOp): one op reads every
// input once and writes every result, fuse operands at a time; P <= fuse
// is a single kernel moving P reads and P writes of B, the least any
// schedule can. Larger teams reduce into dst0 in groups and copy it out.
//
// Pairwise (fuse < 2): dst0 = src0, dst0 op= src(i) for i = 1..P-1, then
// dst(r) = dst0: 2B + 3B(P-1) + 2B(P-1) bytes read and written.
//
// In place (src(r) == dst(r)) every input is read before any result is
// written: a fused kernel reads an element's sources before it writes it,
// and the pairwise copies out wait for the last reduction.
func AllreducePlan(srcs, dsts []exec.Region, fuse int) []Op {
	if fuse < 2 {
		return allreducePairwise(srcs, dsts)
	}
	p := len(srcs)
	if p == 1 {
		if same(srcs[0], dsts[0]) {
			return nil
		}
		return []Op{{Kind: sched.OpCopy, Dsts: one(dsts[0]), Srcs: one(srcs[0])}}
	}
	if p <= fuse {
		return []Op{{Kind: sched.OpReduce, Dsts: dsts, Srcs: srcs}}
	}
	ops := []Op{{Kind: sched.OpReduce, Dsts: one(dsts[0]), Srcs: srcs[:fuse]}}
	for i := fuse; i < p; {
		k := min(fuse-1, p-i)
		in := append(one(dsts[0]), srcs[i:i+k]...)
		ops = append(ops, Op{Kind: sched.OpReduce, Dsts: one(dsts[0]), Srcs: in, Deps: deps(len(ops) - 1)})
		i += k
	}
	last := len(ops) - 1
	for r := 1; r < p; r += fuse {
		ops = append(ops, Op{Kind: sched.OpCopy, Dsts: dsts[r:min(r+fuse, p)], Srcs: one(dsts[0]), Deps: deps(last)})
	}
	return ops
}

func allreducePairwise(srcs, dsts []exec.Region) []Op {
	p := len(srcs)
	ops := make([]Op, 0, 2*p)
	last := -1
	if !same(srcs[0], dsts[0]) {
		ops = append(ops, Op{Kind: sched.OpCopy, Dsts: one(dsts[0]), Srcs: one(srcs[0])})
		last = 0
	}
	for i := 1; i < p; i++ {
		ops = append(ops, Op{Kind: sched.OpReduce, Dsts: one(dsts[0]), Srcs: one(srcs[i]), Deps: deps(last)})
		last = len(ops) - 1
	}
	for r := 1; r < p; r++ {
		ops = append(ops, Op{Kind: sched.OpCopy, Dsts: one(dsts[r]), Srcs: one(dsts[0]), Deps: deps(last)})
	}
	return ops
}
