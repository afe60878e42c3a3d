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
//
// piece > 0 copies each block piece by piece, every destination of a
// piece before the next piece: a piece small enough for the GPU's L2
// cache is read from memory once for its P copies.
func AllgatherPlan(srcs, dsts []exec.Region, piece int64) []Op {
	B := srcs[0].Len()
	if piece <= 0 || piece > B {
		piece = B
	}
	var ops []Op
	for i, src := range srcs {
		for off := int64(0); off < B; off += piece {
			n := min(piece, B-off)
			for _, dst := range dsts {
				d := dst.Slice(int64(i)*B+off, n)
				if s := src.Slice(off, n); !same(s, d) {
					ops = append(ops, Op{Kind: sched.OpCopy, Dst: d, Src: s})
				}
			}
		}
	}
	return ops
}
