package bench

import (
	"context"
	"fmt"
	"syscall"
	"time"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/team"
)

// Calls through the team layer (Config.Team): each measured call is one
// team.Coll over the rank's buffers, made once per (algorithm, size) and
// posted and tested every iteration, exactly as UCC drives goring's team
// layer. The team's Select picks the runner (the sched program on one
// Machine or on lanes, the leader on a shared GPU, alltoallv's count
// exchange, dispatch and combine), so what bench measures is what the
// team layer runs. A call of a named algorithm names it (team.Args.Alg):
// the engines that run no sched program (node kernels, cross-memory
// reads) take only calls that name none, which are Auto's (auto.go): what
// the UCC layer runs for a call, measured.

// teamArgs is rc's call as the team layer's arguments: its collective
// over the rank's buffers, the algorithm and the shape of rc's plan.
func (rc *rankCall) teamArgs() team.Args {
	cfg, plan := rc.cfg, rc.plan
	a := team.Args{Coll: cfg.Collective, Src: regionPtr(rc.bufs.Src), Dst: regionPtr(rc.bufs.Dst), Dtype: coll.Uint8,
		Op: cfg.Op, Root: cfg.Root, Mem: team.MemHost, Alg: plan.Algorithm, Chunks: cfg.Chunks, Routing: plan.Routing}
	if a.Alg == Auto {
		a.Alg = "" // the team's own choice, as for a UCC call (auto.go)
	}
	if !rc.bufs.Dst.IsHost() {
		a.Mem = team.MemCUDA
	}
	if cfg.Collective.Reduces() {
		a.Dtype = cfg.Dtype
	}
	a.Count = uint64(plan.Bytes / int64(a.Dtype.Size()))
	switch cfg.Collective {
	case coll.Bcast:
		a.Src = nil // UCC's bcast has one buffer: the root's input, everyone's output
	case coll.Alltoallv:
		a.A2A = alltoallvArgs(plan.Counts, cfg.Rank)
	}
	return a
}

// alltoallvArgs is rank's row (what it sends) and column (what it
// receives) of the byte matrix counts, packed in rank order.
func alltoallvArgs(counts [][]int64, rank int) *team.A2AArgs {
	n := len(counts)
	a := &team.A2AArgs{SendCounts: make([]uint64, n), RecvCounts: make([]uint64, n), SendDispls: make([]uint64, n), RecvDispls: make([]uint64, n)}
	var sent, got uint64
	for p := range n {
		a.SendCounts[p], a.SendDispls[p] = uint64(counts[rank][p]), sent
		a.RecvCounts[p], a.RecvDispls[p] = uint64(counts[p][rank]), got
		sent += a.SendCounts[p]
		got += a.RecvCounts[p]
	}
	return a
}

// regionPtr is the address of r for the team layer's arguments (nil for
// an empty region). bench's buffers come from ucx.Alloc or the GPU, never
// from the Go heap, as the team layer asks of its callers.
func regionPtr(r exec.Region) unsafe.Pointer {
	if r.Len() == 0 {
		return nil
	}
	if r.IsHost() {
		return unsafe.Pointer(&r.Bytes()[0])
	}
	addr := r.Addr()
	return *(*unsafe.Pointer)(unsafe.Pointer(&addr)) // device memory: an address, never dereferenced here
}

// newTeamCall makes rc's call on the team; rc.close finalizes it.
func (rc *rankCall) newTeamCall() error {
	c, err := rc.makeTeamColl()
	if err != nil {
		return err
	}
	rc.coll = c
	rc.release = append(rc.release, c.Finalize)
	return nil
}

// makeTeamColl is a new call over rc's buffers on the team, as a UCC
// user's ucc_collective_init makes one.
func (rc *rankCall) makeTeamColl() (*team.Coll, error) {
	a := rc.teamArgs()
	var c *team.Coll
	var err error
	if a.Coll.Routed() {
		c, err = team.NewMoEColl(rc.team, team.MoEArgs{Coll: a.Coll, Routing: a.Routing, Src: a.Src, Dst: a.Dst, Dtype: a.Dtype, Mem: a.Mem, Alg: a.Alg, Chunks: a.Chunks})
	} else {
		c, err = team.NewColl(rc.team, a)
	}
	if err != nil {
		return nil, fmt.Errorf("%s/%s %d bytes: %w", a.Coll, a.Alg, rc.plan.Bytes, err)
	}
	return c, nil
}

// runTeamCall posts the call and tests it until it completes, as UCC's
// progress does (Test never blocks), or until deadline; a call left in
// flight is withdrawn when rc is closed (Finalize). Between tests that
// find the call running, bench waits as its own executor's transport
// does (ucx_mp's Transport.Wait, with the transport's SpinPolls and
// Yield): it tests SpinPolls times back to back, then for Yield gives
// the core to other threads between tests (sched_yield), then sleeps on
// the team worker's event fd, which any message to this rank wakes, so
// that more ranks than cores still make progress; at most idleWait, for
// work the fd does not see. A call on device memory waits for its GPU,
// which wakes no fd: it never sleeps. A call on lanes has goroutines of
// its own on the workers (team/lanes.go), whose fds they sleep on: it
// naps idleWait/20 at a time instead.
//
// With Config.InitPerCall the call is a new team.Coll, made before the
// post and finalized after it completes, all inside the timed region:
// what a UCC user's non-persistent call costs (Open MPI's coll/ucc,
// ucc_perftest without -p), where the default reposts one Coll (-p).
func (rc *rankCall) runTeamCall(ctx context.Context, deadline time.Time) error {
	c := rc.coll
	if rc.cfg.InitPerCall {
		var err error
		if c, err = rc.makeTeamColl(); err != nil {
			return err
		}
		defer c.Finalize()
	}
	rc.ran = c
	if err := c.Post(); err != nil {
		return err
	}
	tr := rc.team.Transport()
	var yieldUntil time.Time
	for polls := 1; ; polls++ {
		done, err := c.Test()
		switch {
		case err != nil:
			return err
		case done:
			return nil
		}
		if tr.SpinPolls >= 0 && polls < tr.SpinPolls {
			continue
		}
		now := time.Now()
		if err := ctx.Err(); err != nil {
			return err
		}
		if !now.Before(deadline) {
			return fmt.Errorf("%s/%s %d bytes: rank %d: %w", rc.plan.Collective, rc.plan.Algorithm, rc.plan.Bytes, rc.cfg.Rank, exec.ErrDeadline)
		}
		if tr.SpinPolls < 0 {
			continue // busy-polling: never yields nor sleeps, but keeps the deadline
		}
		if yieldUntil.IsZero() {
			yieldUntil = now.Add(tr.Yield)
		}
		switch {
		case now.Before(yieldUntil) || !rc.bufs.Dst.IsHost():
			schedYield()
		case rc.laneCount > 1:
			time.Sleep(idleWait / 20) // the lanes' goroutines drive the workers
		default:
			if _, err := tr.Worker().Wait(min(deadline.Sub(now), idleWait)); err != nil {
				return err
			}
		}
	}
}

// idleWait bounds one sleep of runTeamCall on the worker's event fd.
const idleWait = time.Millisecond

// schedYield gives the core to another runnable thread (sched_yield(2)).
func schedYield() { _, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
