package onedevice

import (
	"fmt"

	"github.com/goring-hpc/goring/coll"
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

// Work is what a plan asks of the leader's device: bytes copied, bytes
// reduced (each read twice and written once) and the number of ops.
type Work struct {
	Copied, Reduced int64
	Ops             int
}

// PlanWork is the work of c's plan over p ranks of B bytes (an
// allreduce's vector, an allgather's block), not in place: what package
// tune charges the leader algorithms on a shared GPU.
func PlanWork(c coll.Collective, p int, B int64) (Work, error) {
	if p < 1 || B < 0 {
		return Work{}, fmt.Errorf("onedevice: %d ranks of %d bytes", p, B)
	}
	fake := exec.Mem{Kind: exec.MemFake}
	srcs, dsts := make([]exec.Region, p), make([]exec.Region, p)
	dlen := B
	if c == coll.Allgather {
		dlen = int64(p) * B
	}
	next := uintptr(1 << 20) // distinct addresses: nothing is in place
	for r := range srcs {
		srcs[r] = exec.DeviceRegion(fake, next, B)
		next += uintptr(B) + 1
		dsts[r] = exec.DeviceRegion(fake, next, dlen)
		next += uintptr(dlen) + 1
	}
	var ops []Op
	switch c {
	case coll.Allreduce:
		ops = AllreducePlan(srcs, dsts, 0)
	case coll.Allgather:
		ops = AllgatherPlan(srcs, dsts, 0)
	default:
		return Work{}, fmt.Errorf("onedevice: no leader algorithm for %s", c)
	}
	w := Work{Ops: len(ops)}
	for _, op := range ops {
		if op.Kind == sched.OpReduce {
			w.Reduced += op.Dst.Len()
		} else {
			w.Copied += op.Dst.Len()
		}
	}
	return w, nil
}
