package onedevice

import (
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// AllgatherPlan is the leader allgather over P ranks' buffers (srcs[r] of
// B bytes, dsts[r] of P*B; package sched's "leader" allgather in
// messages): every block i is copied into every rank's dst at i*B, P*P
// independent copies (P fewer in place, where a rank's block is already
// its own source). One context makes them all, block after block, so the
// GPU never turns between processes.
func AllgatherPlan(srcs, dsts []exec.Region) []Op {
	p := len(srcs)
	ops := make([]Op, 0, p*p)
	for i, src := range srcs {
		for _, dst := range dsts {
			d := dst.Slice(int64(i)*src.Len(), src.Len())
			if !same(src, d) {
				ops = append(ops, Op{Kind: sched.OpCopy, Dst: d, Src: src})
			}
		}
	}
	return ops
}
