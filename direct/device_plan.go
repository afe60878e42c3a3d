package direct

import (
	"fmt"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// Op is one step of a plan over regions the leader can address (its own
// buffers and its mappings of the others'), as exec's LocalRun runs it:
// Srcs reduced in order into every region of Dsts, after the ops of Deps.
type Op = exec.LocalStep

// same reports whether a and b are one range of memory: a copy between
// them has nothing to do (a rank's own block in place).
func same(a, b exec.Region) bool {
	return a.Mem() == b.Mem() && a.Addr() == b.Addr() && a.Len() == b.Len()
}

// deps is the dependency list of one earlier op (none for -1).
func deps(i int) []int {
	if i < 0 {
		return nil
	}
	return []int{i}
}

// one is a region as a one-element list.
func one(r exec.Region) []exec.Region { return []exec.Region{r} }

// Work is what a plan asks of the leader's device: bytes read and
// written, and the number of ops (each a launch).
type Work struct {
	Read, Written int64
	Ops           int
}

// PlanWork is the work of c's plan over p ranks of B bytes (an
// allreduce's vector, an allgather's or a reduce_scatter's block, a
// bcast's buffer), not in place, with ops of
// up to fuse operands (below 2: pairwise): what package tune charges the
// leader algorithms on a shared GPU.
func PlanWork(c coll.Collective, p int, B int64, fuse int) (Work, error) {
	if p < 1 || B < 0 {
		return Work{}, fmt.Errorf("direct: %d ranks of %d bytes", p, B)
	}
	fake := exec.Mem{Kind: exec.MemFake}
	srcs, dsts := make([]exec.Region, p), make([]exec.Region, p)
	slen, dlen := B, B
	switch c {
	case coll.Allgather:
		dlen = int64(p) * B
	case coll.ReduceScatter:
		slen = int64(p) * B
	}
	next := uintptr(1 << 20) // distinct addresses: nothing is in place
	for r := range srcs {
		srcs[r] = exec.DeviceRegion(fake, next, slen)
		next += uintptr(slen) + 1
		dsts[r] = exec.DeviceRegion(fake, next, dlen)
		next += uintptr(dlen) + 1
	}
	var ops []Op
	switch c {
	case coll.Allreduce:
		ops = AllreducePlan(srcs, dsts, fuse)
	case coll.Allgather:
		ops = AllgatherPlan(srcs, dsts, fuse)
	case coll.ReduceScatter:
		ops = ReduceScatterPlan(srcs, dsts)
	case coll.Bcast:
		ops = BcastPlan(srcs, dsts, 0, fuse)
	default:
		return Work{}, fmt.Errorf("direct: no leader algorithm for %s", c)
	}
	w := Work{Ops: len(ops)}
	for _, op := range ops {
		n := op.Dsts[0].Len()
		w.Read += n * int64(len(op.Srcs))
		if op.Kind == sched.OpReduce && !op.Fused() {
			w.Read += n // the pairwise reduction reads its destination too
		}
		w.Written += n * int64(len(op.Dsts))
	}
	return w, nil
}
