package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/cudaexec"
	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/ucx"
)

// The rank side of goring bench: one process of the job joins it as the
// flags say (bench.JoinTeams, JoinRails or JoinLanes), wires its memory
// (bench.RankJob.UseGPU) and runs the timed loop (bench.RunLanes); rank 0
// prints the results. A job's failure ends the process here
// (exitOnJobFailure).

// benchRank is one rank: join the job, connect UCX, run, and (rank 0)
// print the results.
func benchRank(cmd *cobra.Command, f *benchFlags, collName string) (err error) {
	role, err := launch.FromEnv()
	if err != nil {
		return err
	}
	if f.np != 0 && f.np != role.Size {
		return fmt.Errorf("rank %d: --np %d but the job has %d ranks", role.Rank, f.np, role.Size)
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("rank %d: %w", role.Rank, err)
		}
	}()
	job, err := prepareBench(f, collName, role.Size)
	if err != nil {
		return err
	}
	job.cfg.Rank = role.Rank
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	stderr := cmd.ErrOrStderr()
	rj, err := joinBench(ctx, role, f, job, stderr)
	if err != nil {
		return err
	}
	defer rj.Close()
	sess := rj.Sess
	for _, d := range rj.Data {
		bench.SetWait(d, f.spinPolls, f.yield)
	}

	out := cmd.OutOrStdout()
	progress := rankOutput(job, f, collName, role.Rank, out, stderr)
	defer progress.clear()
	job.cfg.Alloc = ucx.Alloc
	job.cfg.Free = ucx.Free
	mem, closeMem, err := benchRankMemory(f, rj, role.Rank, job, stderr)
	if err != nil {
		return err
	}
	defer closeMem()
	job.cfg.Memory = mem
	if job.cfg.Lanes == nil {
		job.cfg.Team = rj.Teams[1]
	} else {
		job.cfg.LaneTeams = rj.Teams
	}
	stopProfile, err := startRankProfile(role.Rank)
	if err != nil {
		return err
	}
	defer stopProfile()
	rows, err := bench.RunLanes(ctx, job.cfg, rj.Data, sess)
	if err != nil {
		rj.WaitVerdict()
		return err
	}
	if err := sess.Barrier(ctx); err != nil {
		return err
	}
	if role.Rank == 0 {
		progress.clear()
		if err := writeBenchOutput(out, f, collName, rows); err != nil {
			return err
		}
		if f.netns.on() && !f.json && !f.csv {
			if err := writePredictions(out, job.cfg, rows); err != nil {
				return err
			}
		}
	}
	return rj.Finish()
}

// joinBench joins the rank's job the way the flags ask: through the team
// layer (bench.JoinTeams), on the namespace testbed's rails
// (bench.JoinRails), or over lanes of bench's own (bench.JoinLanes).
func joinBench(ctx context.Context, role launch.Role, f *benchFlags, job *benchJob, stderr io.Writer) (*bench.RankJob, error) {
	node, local, _ := job.cfg.Topo.Locate(role.Rank)
	j := bench.Join{Role: role, Node: node, Local: local, OnFailure: exitOnJobFailure(role.Rank, stderr)}
	switch {
	case benchThroughTeam(f, job):
		opts := bench.TeamOptions{AutoLanes: f.autoLanes(), CUDA: f.mem == "cuda", IPC: f.ipc, Calibration: f.calibration}
		return bench.JoinTeams(ctx, j, &job.cfg, opts, f.devicePoll)
	case f.netns.on():
		return bench.JoinRails(ctx, j, job.cfg.Topo, f.netns.rails, f.mem == "cuda", maxLanes(job.cfg.Lanes))
	default:
		return bench.JoinLanes(ctx, j, f.mem == "cuda", maxLanes(job.cfg.Lanes))
	}
}

// exitOnJobFailure is a rank's answer to its job's failure (another rank
// died or stalled, or the coordinator went away): say so and exit,
// whatever the rank is doing.
func exitOnJobFailure(rank int, stderr io.Writer) func(error) {
	return func(err error) {
		fmt.Fprintf(stderr, "goring: rank %d: %v\n", rank, err)
		os.Exit(1)
	}
}

// rankOutput wires rank 0's progress line (where stderr is a terminal:
// bench_progress.go) and OSU-style table (unless --json/--csv) into the
// job; the line, or nil, is returned for the caller to clear at the end.
func rankOutput(job *benchJob, f *benchFlags, collName string, rank int, out, stderr io.Writer) *progressLine {
	if rank != 0 {
		return nil
	}
	progress := newProgressLine(stderr, collName)
	if progress != nil {
		job.cfg.OnIteration = progress.update
	}
	if !f.json && !f.csv {
		table := &bench.TableWriter{W: out, Comment: describeJob(job)}
		job.cfg.OnRow = func(r bench.Row) {
			progress.clear()
			_ = table.Row(r)
		}
	}
	return progress
}

// benchRankMemory is the rank's memory for --mem (nil for host), wired
// into its data plane (bench.RankJob.UseGPU); rank 0 says how device
// buffers move where goring does not push them itself. The closer
// releases them, newest first.
func benchRankMemory(f *benchFlags, rj *bench.RankJob, rank int, job *benchJob, stderr io.Writer) (bench.Memory, func(), error) {
	mem, closeMem, err := rankMemory(f, rank)
	if err != nil {
		return nil, nil, err
	}
	closers := []func(){func() { _ = closeMem() }}
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	if mem == nil {
		return mem, closeAll, nil
	}
	g, ok := mem.(*cudaexec.GPU)
	if !ok {
		closeAll()
		return nil, nil, errors.New("the rank's memory is not a GPU")
	}
	cl, w, err := rj.UseGPU(g, rank, job.cfg.Topo, f.ipc, job.planner(rank))
	closers = append(closers, cl...)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	if rank == 0 {
		gpuNote(stderr, f, w)
	}
	return mem, closeAll, nil
}

// startRankProfile writes this rank's CPU profile into
// $GORING_CPUPROFILE_DIR, if set (a measurement aid).
func startRankProfile(rank int) (func(), error) {
	dir := os.Getenv("GORING_CPUPROFILE_DIR")
	if dir == "" {
		return func() {}, nil
	}
	pf, err := os.Create(filepath.Join(dir, fmt.Sprintf("rank%d.pprof", rank)))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		pf.Close()
	}, nil
}

// isTerminal reports whether w is a terminal: the progress line is drawn
// only there, so logs and captured stderr stay clean.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
