package direct

import (
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// BcastPlan is the leader broadcast over P ranks' buffers (package
// sched's "leader" bcast in messages): the root's source copied into every
// rank's destination, fuse destinations per op (below 2: one copy each).
// Where a rank's source is its destination (UCC's one buffer) the root's
// own copy has nothing to do. Rank 0 makes the copies whichever rank is
// the root.
func BcastPlan(srcs, dsts []exec.Region, root, fuse int) []Op {
	var to []exec.Region
	for _, d := range dsts {
		if !same(srcs[root], d) {
			to = append(to, d)
		}
	}
	step := max(fuse, 1)
	var ops []Op
	for k := 0; k < len(to); k += step {
		ops = append(ops, Op{Kind: sched.OpCopy, Dsts: to[k:min(k+step, len(to))], Srcs: one(srcs[root])})
	}
	return ops
}
