package onedevice

import (
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// Op is one copy or reduction of a plan, over regions the leader can
// address (its own buffers and its mappings of the others'). Deps are the
// indices of earlier ops that must have finished first; ops are listed in
// an order that respects them, so an executor that runs ops in the order
// started needs no waiting between them.
type Op struct {
	Kind     sched.StepOp // sched.OpCopy, or sched.OpReduce: Dst = Dst op Src
	Dst, Src exec.Region
	Deps     []int
}

// same reports whether a and b are one range of memory: a copy between
// them has nothing to do (a rank's own block in place).
func same(a, b exec.Region) bool {
	return a.Mem() == b.Mem() && a.Addr() == b.Addr() && a.Len() == b.Len()
}
