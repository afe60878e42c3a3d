package direct

import (
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// ReduceScatterPlan is the leader reduce-scatter over P ranks' buffers
// (srcs[r] of P*B bytes, dsts[r] of B; package sched's "leader"
// reduce_scatter in messages): block r of every input, reduced in rank
// order, into rank r's dst, one fused op per block (P reads and one write
// of B each). UCC's in place has dst(r) inside src(r) (its block r), which
// one kernel per block serves: it reads an element's sources before it
// writes. So the plan needs P <= fuse (the Call refuses the rest).
func ReduceScatterPlan(srcs, dsts []exec.Region) []Op {
	B := dsts[0].Len()
	ops := make([]Op, 0, len(dsts))
	for r, dst := range dsts {
		in := make([]exec.Region, len(srcs))
		for i, src := range srcs {
			in[i] = src.Slice(int64(r)*B, B)
		}
		kind := sched.OpReduce
		if len(in) == 1 {
			kind = sched.OpCopy
			if same(in[0], dst) {
				continue
			}
		}
		ops = append(ops, Op{Kind: kind, Dsts: one(dst), Srcs: in})
	}
	return ops
}
