package bench

import (
	"context"
	"time"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/onedevice"
)

// The leader algorithms on a shared GPU (Config.OneDevice): the call runs
// as package onedevice's protocol instead of the plan's messages, so that
// goring bench measures and validates what the team layer runs.

// oneDeviceCall is a rank's share of such a call.
type oneDeviceCall struct {
	cfg  onedevice.Config
	call onedevice.Call
}

// runsOnOneDevice reports whether rc's call runs as one process's device
// work: its ranks share one GPU (Config.OneDevice) and onedevice.Runs
// takes the call, as the team layer chooses.
func (rc *rankCall) runsOnOneDevice() bool {
	return rc.cfg.OneDevice != nil && !rc.bufs.Src.IsHost() && onedevice.Runs(rc.plan.Algorithm, rc.cfg.Collective, rc.plan.NRanks)
}

// newOneDevice prepares the call: the rank's executor (rank 0's runs the
// copies and reductions of every rank) over its buffers.
func (rc *rankCall) newOneDevice() error {
	local, err := rc.mem.NewLocal()
	if err != nil {
		return err
	}
	if c, ok := local.(interface{ Close() error }); ok {
		rc.release = append(rc.release, func() { _ = c.Close() })
	}
	dtype, op := rc.cfg.Collective.Reduction(rc.cfg.Dtype, rc.cfg.Op)
	rc.one = &oneDeviceCall{cfg: onedevice.Config{Collective: rc.cfg.Collective, Rank: rc.cfg.Rank, Size: rc.plan.NRanks, Root: rc.cfg.Root,
		Src: rc.bufs.Src, Dst: rc.bufs.Dst, Dtype: dtype, Op: op, Mapper: rc.cfg.OneDevice, Local: local}}
	return nil
}

// runOneDevice runs one call over t by deadline, driven as exec.Run
// drives a Machine.
func (rc *rankCall) runOneDevice(ctx context.Context, t Transport, deadline time.Time) error {
	cfg := rc.one.cfg
	cfg.Transport, cfg.Deadline = t, deadline
	if err := rc.one.call.Begin(cfg); err != nil {
		return err
	}
	return exec.Drive(ctx, &rc.one.call, deadline)
}
