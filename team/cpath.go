package team

import (
	"github.com/goring-hpc/goring/cexec"
	"github.com/goring-hpc/goring/coll"
)

// The C path: small host collectives that never enter Go (docs/ucc.md
// "Small collectives in C"). The first call of a shape runs here in Go,
// which lowers its program into the team's C cache (offerCPath); cpath.c
// runs every later call of that shape in package cexec's executor. Both
// executors run the same program with the same tags and draw their
// sequence numbers from one counter in post order, so a call may run in C
// on one rank and in Go on another.
//
// cpath.c and its table of teams are C, which this package does not call:
// the adapter hands the context a CPathTable that lists a team's C side
// under the team's handle.

// CPathTable lists teams' C sides where cpath.c looks a call's team up.
type CPathTable interface {
	// Register lists ct under the team's handle; false: the table is
	// full, and the team stays in Go.
	Register(handle uint64, ct *cexec.Team) bool
	// Unregister cancels the C calls of the team still live and drops it.
	Unregister(handle uint64)
}

// defaultCPathMax is the largest call (bytes of the vector per rank; for
// alltoall, what a rank sends) the C path takes by default: where the Go path's per-call cost, not the
// transfer, is most of the time (docs/ucc.md).
const defaultCPathMax = 64 << 10

// maxCPathMax bounds the option: beyond a few MiB the transfer dominates
// and the Go path's pipelining and lanes matter more than its call cost.
const maxCPathMax = 16 << 20

// openCPath gives a connected team its C side, unless the context turned
// the C path off or needs what only Go does: a deadline, or every call on
// several lanes (a lane count the user named). With lanes=auto a call
// that takes lanes is never lowered (offerCPath), and one that does not
// runs as on a team of one lane.
func (t *Team) openCPath() error {
	if !t.cpathWanted(len(t.lanes) + 1) {
		return nil
	}
	ct, err := cexec.NewTeam(t.tr.Worker(), t.rank, t.size, t.tr.Endpoint)
	if err != nil {
		return resourceErr{err}
	}
	if t.ctx.cpath == nil || !t.ctx.cpath.Register(t.handle, ct) {
		ct.Free() // no table, or it is full: this team stays in Go
		return nil
	}
	t.tr.ShareSeq(ct.SeqCell())
	t.cpath = ct
	return nil
}

// cpathWanted says whether a team of lanes lanes gets a C side.
func (t *Team) cpathWanted(lanes int) bool {
	o := t.ctx.opts
	return o.cpathMax != 0 && o.timeout <= 0 && (lanes <= 1 || o.lanes == 0)
}

// closeCPath cancels the C calls still live and lets go of the C side,
// before the worker it posts on goes; a C call cut short cuts the team
// short (workerpool.go). Caller holds t.mu, not the C lock.
func (t *Team) closeCPath() {
	if t.cpath == nil {
		return
	}
	t.ctx.cpath.Unregister(t.handle)
	t.cpath.Lock()
	t.cutShort = t.cutShort || t.cpath.CutShort()
	t.cpath.Unlock()
	t.cpath.Free()
	t.cpath = nil
}

// lockC takes the C path's lock of the team (cexec.Team.Lock) for a Go
// entry point that touches the team's worker or C cache, after t.mu, and
// returns the C side it locked for unlockC (`defer unlockC(t.lockC())`):
// the one locked is the one released, even where the call sets t.cpath.
// Without a C side there is nothing to take (nil). No closure: a Test
// of a call in flight runs this millions of times a second, and a method
// value would be an allocation each time.
func (t *Team) lockC() *cexec.Team {
	ct := t.cpath
	if ct != nil {
		ct.Lock()
		t.cLocks++
	}
	return ct
}

// unlockC releases what lockC took.
func unlockC(ct *cexec.Team) {
	if ct != nil {
		ct.Unlock()
	}
}

// noteBusy tells the C path whether Go has a call on the wire or queued.
// Caller holds t.mu.
func (t *Team) noteBusy() {
	if t.cpath != nil {
		t.cpath.SetGoBusy(t.cur != nil || len(t.queue) > 0)
	}
}

// OfferCPath lowers the program of a call that Go just built into the
// team's C cache under k (the call's shape as cpath.c keys it), when the C
// path serves its shape: host memory, one lane, allgather, allreduce,
// reduce_scatter, bcast or alltoall (not alltoallv, whose counts vary by
// call, nor an algorithm that exchanges counts first), at most cpathMax
// bytes. Nothing here fails the call: a shape not lowered stays in Go.
func (t *Team) OfferCPath(k cexec.Key, c *Coll, a Args) {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer unlockC(t.lockC())
	// Only a plan's program on one Machine from the first message on (no
	// lanes, no count exchange, no engine of its own) is C's to run.
	r, oneMachine := c.run.(*machineRunner)
	if t.cpath == nil || !oneMachine || r.xchg != nil || c.entry == nil || c.gpu != nil || c.trivial ||
		a.Mem != MemHost || len(a.Alg) > cexec.MaxAlgName {
		return
	}
	if !t.cpathShape(a, true) || t.cpath.Has(k) {
		return
	}
	layout, shift := cpathLayout(a)
	dtype, op := a.Coll.Reduction(a.Dtype, a.Op)
	p, err := cexec.Lower(c.entry.program(t.rank), c.alg, dtype, op, layout, shift)
	if err != nil {
		return
	}
	_, _ = t.cpath.Put(k, p)
	p.Release()
}

// cpathShape says whether a C path serves the shape of call a: allgather,
// allreduce, reduce_scatter or bcast, or with alltoall (the team's own C
// path; the context path plans no count exchange) alltoall not in place,
// at most cpath_max bytes (of the vector per rank; for alltoall, what a
// rank sends in all) and not empty (an empty call is done at post). The
// team's C path and the context path (shared.go) take the same shapes
// but alltoall.
func (t *Team) cpathShape(a Args, alltoall bool) bool {
	B := int64(a.Count) * int64(a.Dtype.Size())
	switch {
	case a.Coll == coll.Allgather, a.Coll == coll.Allreduce, a.Coll == coll.ReduceScatter, a.Coll == coll.Bcast:
	case alltoall && a.Coll == coll.Alltoallv && a.A2A != nil && a.A2A.Uniform && !a.InPlace:
		// Alltoall: the same counts every call, so the plan (pairwise,
		// from this rank's counts alone) is the shape's. B counts what
		// the rank sends in all.
		B *= int64(t.size)
	default:
		return false
	}
	return B > 0 && B <= t.ctx.opts.cpathMax
}

// CheckPeers is the C path's failure detector (goring_go_team_check): UCX's
// endpoint errors, then the processes of the peers on this host. nil:
// every peer may still come, and the call keeps waiting.
func (t *Team) CheckPeers() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer unlockC(t.lockC())
	if t.tr != nil {
		if err := t.tr.PeerErr(); err != nil {
			return err // as the Go path's call would report it
		}
	}
	if t.watch != nil {
		return t.watch.Check()
	}
	return nil
}
