package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/launch"
)

// The rank side of goring bench: one process of the job joins and runs it
// as the flags say (bench.JoinRank, RankRun.Run: the join, the memory, the
// timed loop); rank 0 prints the results. A job's failure ends the process
// here (exitOnJobFailure).

// benchRank is one rank: join the job, run, and (rank 0) print the
// results.
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
	rr, err := bench.JoinRank(ctx, rankSpec(role, f, job, stderr), &job.cfg)
	if err != nil {
		return err
	}
	defer rr.Close()

	out := cmd.OutOrStdout()
	progress := rankOutput(job, f, collName, role.Rank, out, stderr)
	defer progress.clear()
	rows, err := rr.Run(ctx, job.cfg)
	if err != nil {
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
	return rr.Finish()
}

// rankSpec is the flags' answer to how a rank joins and runs
// (bench.RankSpec); rank 0 notes how device buffers move (gpuNote).
func rankSpec(role launch.Role, f *benchFlags, job *benchJob, stderr io.Writer) bench.RankSpec {
	cuda := f.mem == "cuda"
	return bench.RankSpec{
		Join:       bench.Join{Role: role, OnFailure: exitOnJobFailure(role.Rank, stderr)},
		Testbed:    f.netns.on(),
		Rails:      f.netns.rails,
		Team:       bench.TeamOptions{AutoLanes: f.autoLanes(), CUDA: cuda, IPC: f.ipc, Calibration: f.calibration},
		CUDA:       cuda,
		GPUs:       f.gpus,
		IPC:        f.ipc,
		DevicePoll: f.devicePoll,
		Planners:   job.planners,
		SpinPolls:  f.spinPolls,
		Yield:      f.yield,
		OnGPU:      func(w bench.GPUWiring) { gpuNote(stderr, f, w) },
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
