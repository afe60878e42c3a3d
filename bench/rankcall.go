package bench

import (
	"fmt"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/team"
	"github.com/goring-hpc/goring/ucx"
)

// rankCall is one rank's share of one measured (algorithm, size): its
// buffers in the configured memory, the executor over them, the
// validation pattern, and the host copies the pattern is staged through
// when the buffers are on a device.
type rankCall struct {
	cfg              *Config
	plan             *sched.Plan
	pat              *Pattern
	mem              Memory
	bufs             exec.Buffers
	m                *exec.Machine   // one lane
	lanes            []*exec.Machine // several lanes (nil: one); nil entries are empty lanes
	team             *team.Team      // the team the call runs through (Config.Team, teamcall.go); nil: none
	laneCount        int             // the lanes the call runs on
	coll             *team.Coll      // the call on team
	ran              *team.Coll      // the call last posted on team: coll, or with InitPerCall its own
	hostSrc, hostDst []byte
	timeout          time.Duration // deadline of one call
	release          []func()      // run newest first by close
}

// newRankCall allocates the buffers the plan's program needs and builds
// its executor. The caller closes it, also after an error here.
func newRankCall(cfg *Config, lp *lanePlans) (_ *rankCall, err error) {
	plan := lp.whole
	rank := cfg.Rank
	prog := &plan.Ranks[rank]
	rc := &rankCall{cfg: cfg, plan: plan, mem: cfg.Memory, team: cfg.teamFor(lp.count()), laneCount: lp.count()}
	defer func() {
		if err != nil {
			rc.close()
		}
	}()
	if rc.team == nil && cfg.InitPerCall {
		return nil, fmt.Errorf("%s/%s: a new call per iteration needs the team layer (Config.Team)", plan.Collective, plan.Algorithm)
	}
	if rc.team == nil && plan.Algorithm == Auto {
		return nil, fmt.Errorf("%s/%s: the team's choice needs a team (Config.Team)", plan.Collective, Auto)
	}
	rc.pat = &Pattern{Coll: cfg.Collective, Dtype: cfg.Dtype, Op: cfg.Op, NRanks: plan.NRanks, Bytes: plan.Bytes, Counts: plan.Counts, Root: cfg.Root, Routing: plan.Routing}
	if !cfg.Collective.Reduces() {
		rc.pat.Dtype = coll.Uint8
	}
	switch {
	case rc.mem != nil:
	case rc.team != nil && cfg.Alloc == nil:
		// The team layer keeps the caller's pointers while UCX moves
		// them, which Go memory must not be used for.
		rc.mem = newHostMemory(ucx.Alloc, ucx.Free)
	default:
		rc.mem = newHostMemory(cfg.Alloc, cfg.Free)
	}
	z := prog.Sizes
	if z.Dst != rc.pat.DstBytes(rank) {
		return nil, fmt.Errorf("%s/%s: plan gives rank %d a %d-byte dst, the collective needs %d", plan.Collective, plan.Algorithm, rank, z.Dst, rc.pat.DstBytes(rank))
	}
	if lp.lanes != nil || rc.team != nil {
		z.Scratch = 0 // each lane allocates its own; the team layer its own
	}
	bufs := []struct {
		r *exec.Region
		n int64
	}{{&rc.bufs.Src, z.Src}, {&rc.bufs.Dst, z.Dst}, {&rc.bufs.Scratch, z.Scratch}}
	if rc.team != nil && cfg.Collective == coll.Bcast {
		bufs = bufs[1:] // UCC's bcast has one buffer, which the root's input is written into (teamArgs)
	}
	for _, b := range bufs {
		r, err := rc.mem.Alloc(b.n)
		if err != nil {
			return nil, fmt.Errorf("rank %d: %d-byte buffer: %w", rank, b.n, err)
		}
		rc.release = append(rc.release, func() { _ = rc.mem.Free(r) })
		*b.r = r
	}
	if rc.team != nil && cfg.Collective == coll.Bcast {
		rc.bufs.Src = rc.bufs.Dst
	}
	switch {
	case rc.team != nil:
		if err := rc.newTeamCall(); err != nil {
			return nil, err
		}
	case lp.lanes != nil:
		if err := rc.laneMachines(lp, rc.bufs, rc.mem.NewLocal); err != nil {
			return nil, err
		}
	default:
		if err := rc.oneMachine(plan, prog); err != nil {
			return nil, err
		}
	}
	// Patterns are made and checked in host memory; on a device they are
	// staged through these (outside the timed region).
	if !rc.bufs.Src.IsHost() {
		rc.hostSrc, rc.hostDst = make([]byte, z.Src), make([]byte, z.Dst)
	} else {
		rc.hostSrc, rc.hostDst = rc.bufs.Src.Bytes(), rc.bufs.Dst.Bytes()
	}
	rc.timeout = cfg.CallTimeout
	if rc.timeout <= 0 {
		rc.timeout = exec.TimeoutFor(z.Dst + z.Src)
	}
	return rc, nil
}

// oneMachine builds the executor of a call on one lane.
func (rc *rankCall) oneMachine(plan *sched.Plan, prog *sched.RankProgram) (err error) {
	dtype, op := rc.cfg.Collective.Reduction(rc.cfg.Dtype, rc.cfg.Op)
	ecfg := exec.ConfigFor(plan, dtype, op)
	if ecfg.Local, err = rc.mem.NewLocal(); err != nil {
		return err
	}
	if c, ok := ecfg.Local.(interface{ Close() error }); ok {
		rc.release = append(rc.release, func() { _ = c.Close() })
	}
	rc.m, err = exec.New(prog, rc.bufs, ecfg)
	return err
}

// fillSrc writes iteration it's input pattern into src (a bcast's only
// input is the root's).
func (rc *rankCall) fillSrc(it int) error {
	rank := rc.cfg.Rank
	if rc.pat.Coll == coll.Bcast && rank != rc.cfg.Root {
		return nil
	}
	rc.pat.FillSrc(rc.hostSrc[:rc.pat.SrcBytes(rank)], rank, it)
	if rc.bufs.Src.IsHost() {
		return nil
	}
	return rc.mem.Write(rc.bufs.Src, rc.hostSrc[:rc.pat.SrcBytes(rank)])
}

// check compares dst with what iteration it must have produced.
func (rc *rankCall) check(it int) error {
	if !rc.bufs.Dst.IsHost() {
		if err := rc.mem.Read(rc.hostDst, rc.bufs.Dst); err != nil {
			return err
		}
	}
	if err := rc.pat.Check(rc.hostDst, rc.cfg.Rank, it); err != nil {
		return fmt.Errorf("%s/%s %d bytes: %w", rc.plan.Collective, rc.plan.Algorithm, rc.plan.Bytes, err)
	}
	return nil
}

// close releases what newRankCall acquired, newest first.
func (rc *rankCall) close() {
	for i := len(rc.release) - 1; i >= 0; i-- {
		rc.release[i]()
	}
	rc.release = nil
}
