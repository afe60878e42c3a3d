package bench

import (
	"context"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/pushplan"
	"github.com/goring-hpc/goring/ucx"
)

// One rank of goring bench from its join to its last barrier: it joins its
// job the way the job runs (through the team layer, on the namespace
// testbed's rails, or over lanes of its own), wires its memory into the
// data plane, and runs the timed loop. The CLI gives it the flags' answers
// and takes the rows; nothing here reads a flag or prints.

// ThroughTeam says whether a job's calls run through the team layer. Two
// kinds of job cannot, and keep bench's own executor over its own
// transports: the namespace testbed, whose UCX workers bind to one rail
// each and route by the sender's rail (ucxmp.Rails), which a team's
// workers do not; and dispatch or combine on device memory, which the
// team layer does not run yet.
func ThroughTeam(c coll.Collective, testbed, cuda bool) bool {
	return !testbed && !(c.Routed() && cuda)
}

// RankSpec is how one rank of goring bench joins and runs.
type RankSpec struct {
	// Join is the rank's role and its answer to the job's failure; its
	// node and local index are the job topology's (filled by JoinRank).
	Join Join
	// Testbed: the namespace testbed, Rails rails (JoinRails).
	Testbed bool
	Rails   int
	// Team is the team contexts' options where the job runs through the
	// team layer (ThroughTeam).
	Team TeamOptions
	// CUDA: the buffers live on the rank's GPU, rank % GPUs (OpenRankGPU;
	// GPUs 0: every GPU), polled every DevicePoll; IPC: ranks of one host
	// push device memory to each other themselves, split as Planners say
	// (nil: never split).
	CUDA       bool
	GPUs       int
	IPC        bool
	DevicePoll time.Duration
	Planners   *pushplan.Planners
	// SpinPolls and Yield are how a waiting rank polls its transports
	// before it sleeps (SetWait).
	SpinPolls int
	Yield     time.Duration
	// OnGPU, if set, hears on rank 0 how its device buffers move (the CLI
	// notes where goring does not push them itself).
	OnGPU func(GPUWiring)
}

// RankRun is a rank that joined its job. Close releases, newest first,
// what it opened: the profile, the memory, the job.
type RankRun struct {
	spec    RankSpec
	rj      *RankJob
	closers []func()
}

// JoinRank joins the rank's job as s says: through the team layer
// (JoinTeams), on the testbed's rails (JoinRails), or over lanes of
// bench's own (JoinLanes); cfg is the job every rank shares.
func JoinRank(ctx context.Context, s RankSpec, cfg *Config) (*RankRun, error) {
	s.Join.Node, s.Join.Local, _ = cfg.Topo.Locate(s.Join.Role.Rank)
	var rj *RankJob
	var err error
	switch {
	case ThroughTeam(cfg.Collective, s.Testbed, s.CUDA):
		rj, err = JoinTeams(ctx, s.Join, cfg, s.Team, s.DevicePoll)
	case s.Testbed:
		rj, err = JoinRails(ctx, s.Join, cfg.Topo, s.Rails, s.CUDA, MaxLanes(cfg.Lanes))
	default:
		rj, err = JoinLanes(ctx, s.Join, s.CUDA, MaxLanes(cfg.Lanes))
	}
	if err != nil {
		return nil, err
	}
	return &RankRun{spec: s, rj: rj}, nil
}

// Run wires the rank's memory and teams into cfg and runs the timed loop
// (RunLanes); after a failed loop it waits for the coordinator's verdict
// on the job, so that a dead peer is named rather than this rank's
// error. Every rank's rows come back after a barrier of the whole job.
func (r *RankRun) Run(ctx context.Context, cfg Config) ([]Row, error) {
	rj, rank := r.rj, r.spec.Join.Role.Rank
	for _, d := range rj.Data {
		SetWait(d, r.spec.SpinPolls, r.spec.Yield)
	}
	cfg.Alloc = ucx.Alloc
	cfg.Free = ucx.Free
	mem, err := r.memory(cfg, rank)
	if err != nil {
		return nil, err
	}
	cfg.Memory = mem
	if cfg.Lanes == nil {
		cfg.Team = rj.Teams[1]
	} else {
		cfg.LaneTeams = rj.Teams
	}
	stopProfile, err := startProfile(rank)
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, stopProfile)
	rows, err := RunLanes(ctx, cfg, rj.Data, rj.Sess)
	if err != nil {
		rj.WaitVerdict()
		return nil, err
	}
	if err := rj.Sess.Barrier(ctx); err != nil {
		return nil, err
	}
	return rows, nil
}

// memory is the rank's Memory (nil for host buffers: cfg's Alloc and
// Free), wired into its data plane (RankJob.UseGPU); what it opened joins
// r's closers.
func (r *RankRun) memory(cfg Config, rank int) (Memory, error) {
	if !r.spec.CUDA {
		return nil, nil
	}
	g, err := OpenRankGPU(r.spec.GPUs, rank, r.spec.DevicePoll)
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, func() { _ = g.Close() })
	cl, w, err := r.rj.UseGPU(g, rank, cfg.Topo, r.spec.IPC, r.spec.Planners.ForRank(rank))
	r.closers = append(r.closers, cl...)
	if err != nil {
		return nil, err
	}
	if rank == 0 && r.spec.OnGPU != nil {
		r.spec.OnGPU(w)
	}
	return g, nil
}

// Finish tells the coordinator this rank is done and waits for the job's
// end (RankJob.Finish).
func (r *RankRun) Finish() error { return r.rj.Finish() }

// Close releases what the rank opened, newest first, and leaves the job.
func (r *RankRun) Close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
	r.rj.Close()
}

// MaxLanes is how many lanes a rank opens for lanes (nil: one).
func MaxLanes(lanes []int) int {
	n := 1
	for _, w := range lanes {
		n = max(n, w)
	}
	return n
}
