package direct

import (
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// AllgatherPlan is the leader allgather over P ranks' buffers (srcs[r] of
// B bytes, dsts[r] of P*B; package sched's "leader" allgather in
// messages): every block i goes into every rank's dst at i*B, except
// where it already is (a rank's own block in place). One context makes
// every copy, so the GPU never turns between processes.
//
// Fused (fuse >= 2): one op per block and group of fuse destinations
// reads the block once and writes it to each (MultiWrite's one copy per
// bottleneck link, the link being the GPU's memory here): P reads and
// P*P writes of B. Pairwise: a copy per (block, destination), P*P reads.
func AllgatherPlan(srcs, dsts []exec.Region, fuse int) []Op {
	B := srcs[0].Len()
	var ops []Op
	for i, src := range srcs {
		var to []exec.Region
		for _, dst := range dsts {
			if d := dst.Slice(int64(i)*B, B); !same(src, d) {
				to = append(to, d)
			}
		}
		step := max(fuse, 1)
		for k := 0; k < len(to); k += step {
			ops = append(ops, Op{Kind: sched.OpCopy, Dsts: to[k:min(k+step, len(to))], Srcs: one(src)})
		}
	}
	return ops
}
