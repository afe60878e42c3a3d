package cudaexec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/mpath"
	"github.com/goring-hpc/goring/sched"
)

// DefaultMaxStage bounds the staging memory of one (peer, path): a path
// whose chunks do not all fit cycles its slots (mpath.Build).
const DefaultMaxStage = 64 << 20

// Planner chooses how a transfer of n bytes to peer is carried, given the
// step's path hint (its kind, and its load within the node): a plan of one
// or more paths (mpath.Build of the model's split, with at most the
// engine's MaxStage of staging per path; mpath.Planner makes them from a
// calibration), or nil for one direct copy.
type Planner func(peer int, n int64, path sched.Path) *mpath.Plan

// SetPlanner makes the engine split transfers as p says (nil: never).
func (e *Engine) SetPlanner(p Planner) { e.planner = p }

// MaxStage is the staging bound per (peer, path) plans must respect.
func (e *Engine) MaxStage() int64 { return e.maxStage }

// StagingBytes is the staging memory the engine holds (pinned host and
// device), allocated on first use per (peer, path) and kept for reuse.
func (e *Engine) StagingBytes() int64 {
	var n int64
	for _, st := range e.stages {
		n += st.bytes
	}
	return n
}

// stageKey names one staging buffer: the source device, the peer and the
// path ("host", "gpu:2").
type stageKey struct {
	dev, peer int
	path      string
}

// staging is one path's staging buffer between this rank and a peer.
// drained is recorded after the last second hop that read it: the next
// transfer's first hops wait for it before they write.
type staging struct {
	host    *cuda.HostBuffer
	dev     *cuda.Buffer
	bytes   int64
	drained *cuda.Event
}

func (e *Engine) plan(peer int, n int64, path sched.Path) *mpath.Plan {
	if e.planner == nil {
		return nil
	}
	p := e.planner(peer, n, path)
	if p == nil || len(p.Paths) == 0 || p.Bytes != n || (len(p.Paths) == 1 && !p.Paths[0].Path.Staged) {
		return nil // one direct copy
	}
	return p
}

// startPlan queues every op of plan (Multi-path model, Algorithm 1):
// the direct share and each staged path on streams of their own, all
// starting together; a staged path's chunks pipelined, each second hop
// after its first hop and each slot rewritten only once drained, ordered
// by events between streams, never by the host.
func (e *Engine) startPlan(d *cuda.Device, peer int, plan *mpath.Plan, dst, src cuda.DevicePtr) (engineCopy, error) {
	c := engineCopy{dev: d.Ordinal()}
	streams := make([]*cuda.Stream, plan.Streams)
	fail := func(err error) (engineCopy, error) {
		// Queued work cannot be withdrawn: wait for it, then pool. Every
		// stream the plan queued on, not only its recorded events: an op
		// queued after a stream's last event (the direct share records
		// none before the plan's ends) would still write into the peer's
		// memory after a failed Start returned.
		for _, s := range streams {
			if s != nil {
				_ = s.Synchronize()
			}
		}
		for _, ev := range append(c.spare, c.ends...) {
			_ = ev.Synchronize()
		}
		e.events[c.dev] = append(e.events[c.dev], c.spare...)
		e.events[c.dev] = append(e.events[c.dev], c.ends...)
		return engineCopy{}, err
	}
	for i := range streams {
		s, err := e.stream(d, peer, i)
		if err != nil {
			return fail(err)
		}
		streams[i] = s
	}
	stages := make([]*staging, len(plan.Paths))
	for i, pp := range plan.Paths {
		if !pp.Path.Staged {
			continue
		}
		st, err := e.stage(d, peer, pp)
		if err != nil {
			return fail(err)
		}
		stages[i] = st
	}
	// A staging buffer's previous transfer must have drained it.
	for _, op := range plan.Ops {
		if st := stages[op.Path]; st != nil && op.Hop == 0 && st.drained != nil && op.FromOff == plan.Paths[op.Path].Off {
			if err := streams[op.Stream].WaitEvent(st.drained); err != nil {
				return fail(err)
			}
		}
	}
	evs := make([]*cuda.Event, len(plan.Ops))
	for i, op := range plan.Ops {
		s := streams[op.Stream]
		for _, w := range op.Waits {
			if err := s.WaitEvent(evs[w]); err != nil {
				return fail(err)
			}
		}
		if err := e.copyOp(s, op, stages[op.Path], dst, src); err != nil {
			return fail(fmt.Errorf("cudaexec: %s path, hop %d: %w", plan.Paths[op.Path].Path.Name, op.Hop, err))
		}
		if plan.Waited[i] {
			ev, err := e.recordOn(d, s)
			if err != nil {
				return fail(err)
			}
			evs[i] = ev
			c.spare = append(c.spare, ev)
		}
	}
	for i, s := range streams {
		if !laneUsed(plan, i) {
			continue
		}
		ev, err := e.recordOn(d, s)
		if err != nil {
			return fail(err)
		}
		c.ends = append(c.ends, ev)
	}
	for i, st := range stages {
		if st == nil {
			continue
		}
		out := secondHopLane(plan, i)
		if st.drained == nil {
			ev, err := d.NewEvent(false)
			if err != nil {
				return fail(err)
			}
			st.drained = ev
		}
		if err := st.drained.Record(streams[out]); err != nil {
			return fail(err)
		}
	}
	return c, nil
}

// copyOp queues one op: a device copy, or a hop through host or device
// staging.
func (e *Engine) copyOp(s *cuda.Stream, op mpath.Op, st *staging, dst, src cuda.DevicePtr) error {
	n := int(op.N)
	switch {
	case op.From == mpath.Src && op.To == mpath.Dst:
		return cuda.CopyAddrAsync(s, dst+cuda.DevicePtr(op.ToOff), src+cuda.DevicePtr(op.FromOff), n)
	case op.To == mpath.Stage && st.host != nil:
		return cuda.CopyDtoHAddrAsync(s, st.host, int(op.ToOff), src+cuda.DevicePtr(op.FromOff), n)
	case op.From == mpath.Stage && st.host != nil:
		return cuda.CopyHtoDAddrAsync(s, dst+cuda.DevicePtr(op.ToOff), st.host, int(op.FromOff), n)
	case op.To == mpath.Stage:
		return cuda.CopyAddrAsync(s, st.dev.Ptr()+cuda.DevicePtr(op.ToOff), src+cuda.DevicePtr(op.FromOff), n)
	case op.From == mpath.Stage:
		return cuda.CopyAddrAsync(s, dst+cuda.DevicePtr(op.ToOff), st.dev.Ptr()+cuda.DevicePtr(op.FromOff), n)
	}
	return fmt.Errorf("op from %d to %d", op.From, op.To)
}

// stage returns the staging buffer of (d, peer, path), grown to the
// plan's need within MaxStage: pinned host memory for the host path,
// memory of GPU k for "gpu:k".
func (e *Engine) stage(d *cuda.Device, peer int, pp mpath.PathPlan) (*staging, error) {
	need := pp.StageBytes()
	if need > e.maxStage {
		return nil, fmt.Errorf("cudaexec: path %s wants %d bytes of staging, more than the engine's bound %d", pp.Path.Name, need, e.maxStage)
	}
	k := stageKey{dev: d.Ordinal(), peer: peer, path: pp.Path.Name}
	st := e.stages[k]
	if st != nil && st.bytes >= need {
		return st, nil
	}
	if st == nil {
		st = &staging{}
		e.stages[k] = st
	}
	if st.drained != nil { // the old buffer may still be read
		if err := st.drained.Synchronize(); err != nil {
			return nil, err
		}
	}
	st.free()
	switch {
	case pp.Path.Name == model.HostName:
		h, err := d.AllocHost(int(need))
		if err != nil {
			return nil, err
		}
		st.host = h
	case strings.HasPrefix(pp.Path.Name, "gpu:"):
		ord, err := strconv.Atoi(strings.TrimPrefix(pp.Path.Name, "gpu:"))
		if err != nil {
			return nil, fmt.Errorf("cudaexec: path %q", pp.Path.Name)
		}
		sd, err := e.device(ord)
		if err != nil {
			return nil, err
		}
		b, err := sd.Alloc(int(need))
		if err != nil {
			return nil, err
		}
		st.dev = b
	default:
		return nil, fmt.Errorf("cudaexec: no staging for path %q", pp.Path.Name)
	}
	st.bytes = need
	return st, nil
}

func (st *staging) free() error {
	var errs []error
	if st.host != nil {
		errs = append(errs, st.host.Free())
		st.host = nil
	}
	if st.dev != nil {
		errs = append(errs, st.dev.Free())
		st.dev = nil
	}
	st.bytes = 0
	return errors.Join(errs...)
}

// freeStages releases every staging buffer (Close, after the copies).
func (e *Engine) freeStages() error {
	var errs []error
	for k, st := range e.stages {
		errs = append(errs, st.free())
		if st.drained != nil {
			errs = append(errs, st.drained.Destroy())
		}
		delete(e.stages, k)
	}
	return errors.Join(errs...)
}

func laneUsed(p *mpath.Plan, lane int) bool {
	for _, op := range p.Ops {
		if op.Stream == lane {
			return true
		}
	}
	return false
}

// secondHopLane is the stream of path i's second hops.
func secondHopLane(p *mpath.Plan, i int) int {
	for _, op := range p.Ops {
		if op.Path == i && op.Hop == 1 {
			return op.Stream
		}
	}
	return 0
}
