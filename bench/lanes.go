package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/team"
)

// Lanes (Multi-lane, §3): a rank drives W lanes, each with its own
// transport (its own UCX worker and endpoints), and part w of the buffer
// (coll.LaneSplit) runs the collective on lane w of every rank at once.
// Every lane addresses the caller's whole buffers (sched.LaneProgram), so
// the buffers, the pattern and the check are those of one lane.

// lanePlans are the plans of one (algorithm, size) on w lanes: the whole
// call's plan (its buffer sizes are the caller's) and, for w > 1, each
// non-empty lane's plan and part (nil plan: an empty lane). An algorithm
// that cannot serve some lane's part does not serve the call (an
// *sched.UnsupportedError naming the lane).
type lanePlans struct {
	whole *sched.Plan
	lanes []*sched.Plan
	parts []coll.LanePart
}

// planLanes plans alg at bytes on w lanes; every rank reaches the same
// verdict.
func (c *Config) planLanes(alg string, bytes int64, w int) (*lanePlans, error) {
	whole, err := c.Plan(alg, bytes)
	if err != nil || w <= 1 {
		return &lanePlans{whole: whole}, err
	}
	if err := coll.CheckLanes(c.Collective, w); err != nil {
		return nil, err
	}
	dtypeBytes := 1
	if c.Collective.Reduces() {
		dtypeBytes = c.Dtype.Size()
	}
	lp := &lanePlans{whole: whole, lanes: make([]*sched.Plan, w)}
	lp.parts = coll.LaneSplit(c.Collective, bytes, dtypeBytes, whole.NRanks, w)
	for i, p := range lp.parts {
		if p.Len == 0 {
			continue
		}
		if lp.lanes[i], err = c.Plan(alg, p.Len); err != nil {
			if sched.IsUnsupported(err) {
				return nil, sched.Unsupported(alg, "lane %d of %d (%d bytes): %v", i, w, p.Len, err)
			}
			return nil, fmt.Errorf("lane %d: %w", i, err)
		}
	}
	return lp, nil
}

// PlanLanes plans alg at bytes on w lanes and reports whether it is
// served: nil, an *sched.UnsupportedError (every rank agrees), or another
// error.
func (c *Config) PlanLanes(alg string, bytes int64, w int) error {
	_, err := c.planLanes(alg, bytes, w)
	return err
}

// laneMachines builds one machine per non-empty lane of lp over bufs
// (each lane's scratch allocated in rc's memory and released with it).
func (rc *rankCall) laneMachines(lp *lanePlans, bufs exec.Buffers, newLocal func() (exec.LocalExecutor, error)) error {
	rank := rc.cfg.Rank
	rc.lanes = make([]*exec.Machine, len(lp.lanes))
	for w, plan := range lp.lanes {
		if plan == nil {
			continue
		}
		prog, err := sched.LaneProgram(plan, rank, lp.parts[w], lp.whole.Bytes)
		if err != nil {
			return fmt.Errorf("lane %d: %w", w, err)
		}
		scratch, err := rc.mem.Alloc(prog.Sizes.Scratch)
		if err != nil {
			return fmt.Errorf("rank %d lane %d: %d-byte scratch: %w", rank, w, prog.Sizes.Scratch, err)
		}
		rc.release = append(rc.release, func() { _ = rc.mem.Free(scratch) })
		dtype, op := rc.cfg.Collective.Reduction(rc.cfg.Dtype, rc.cfg.Op)
		ecfg := exec.ConfigFor(plan, dtype, op)
		// Each lane reduces on its own executor: lanes run in parallel.
		if ecfg.Local, err = newLocal(); err != nil {
			return err
		}
		if c, ok := ecfg.Local.(interface{ Close() error }); ok {
			rc.release = append(rc.release, func() { _ = c.Close() })
		}
		lb := bufs
		lb.Scratch = scratch
		if rc.lanes[w], err = exec.New(prog, lb, ecfg); err != nil {
			return fmt.Errorf("lane %d: %w", w, err)
		}
	}
	return nil
}

// runCall runs one call of rc on the lanes' transports ts (one lane: the
// one machine over ts[0], exactly as before lanes existed).
func (rc *rankCall) runCall(ctx context.Context, ts []Transport, deadline time.Time) error {
	if rc.coll != nil {
		return rc.runTeamCall(ctx, deadline) // the team starts its calls itself
	}
	for _, t := range ts {
		t.NextCall()
	}
	if rc.lanes == nil {
		return exec.Run(ctx, rc.m, ts[0], deadline)
	}
	ets := make([]exec.Transport, len(rc.lanes))
	for w := range ets {
		ets[w] = ts[w]
	}
	return exec.RunLanes(ctx, rc.lanes, ets, deadline)
}

// count is the lanes lp runs on.
func (lp *lanePlans) count() int { return max(len(lp.lanes), 1) }

// teamFor is the team that runs cfg's calls on w lanes (nil: none, bench's
// own executor runs them): LaneTeams' where given, else Team for one lane.
func (c *Config) teamFor(w int) *team.Team {
	switch {
	case c.LaneTeams != nil:
		return c.LaneTeams[w]
	case w == 1:
		return c.Team
	}
	return nil
}

// laneTransports are the transports of a call on w lanes: ts's first w,
// or through a team, the team's own (its lanes are the team's), which
// carries the barriers.
func (c *Config) laneTransports(ts []Transport, w int) []Transport {
	if t := c.teamFor(w); t != nil {
		return []Transport{t.Transport()}
	}
	return ts[:w]
}

// LaneCounts are the lane counts cfg runs (nil Lanes: one).
func (c *Config) LaneCounts() []int {
	if len(c.Lanes) == 0 {
		return []int{1}
	}
	return c.Lanes
}
