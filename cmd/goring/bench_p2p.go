package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/measure"
	"github.com/goring-hpc/goring/ucx"
)

// goring bench p2p: one GPU-to-GPU transfer between two processes, like
// osu_bw (rank 0 sends a window of messages, rank 1 acknowledges) and
// osu_bibw (both send), over every way goring has to move it: the direct
// push alone, UCX's cuda_ipc, the multi-path model's split, and the best
// static split the run finds by trying host shares in 1% steps. The model
// is fitted in the same run (Multi-path model, section 4: Hockney figures
// per hop), so its prediction is checked against what it is built from.
//
// The ranks' runs and the fits are package measure's (measure.JoinP2P,
// measure.P2P); this file starts the ranks and writes what rank 0
// gathered.

// runP2P is `goring bench p2p`: the launcher checks and starts two ranks.
func runP2P(cmd *cobra.Command, f *benchFlags) error {
	if launch.IsRank() {
		return p2pRank(cmd, f)
	}
	if f.mem != "cuda" {
		return fmt.Errorf("bench p2p measures GPU paths: it needs --mem cuda")
	}
	if f.calibration != "" {
		return fmt.Errorf("--calibration is for collectives: bench p2p fits the paths it measures in the same run")
	}
	if err := checkOutFile("--calibration-out", f.calibrationOut); err != nil {
		return err
	}
	if err := checkOutFile("--png", f.png); err != nil {
		return err
	}
	if f.np == 0 {
		f.np = 2
		_ = cmd.Flags().Set("np", "2")
	}
	if f.np != 2 {
		return fmt.Errorf("bench p2p runs 2 processes, not --np %d", f.np)
	}
	if _, err := benchSizes(f.bytes, coll.DtypeInvalid); err != nil {
		return err
	}
	if err := checkBenchMem(f); err != nil {
		return err
	}
	if err := ucx.Load(); err != nil {
		return fmt.Errorf("cannot load UCX: %w", err)
	}
	return launch.RunLocal(cmd.Context(), rankJob(cmd, 2, "bench", "p2p"))
}

// p2pRank is one of the two ranks: it joins and measures
// (measure.JoinP2P, P2PRank.Run: the buffers and the engine, the model's
// fit, the contents, every row); rank 0 prints.
func p2pRank(cmd *cobra.Command, f *benchFlags) error {
	role, err := launch.FromEnv()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	sizes, err := benchSizes(f.bytes, coll.DtypeInvalid)
	if err != nil {
		return err
	}
	pr, err := measure.JoinP2P(ctx, bench.Join{Role: role, OnFailure: exitOnJobFailure(role.Rank, cmd.ErrOrStderr())}, f.gpus, f.devicePoll)
	if err != nil {
		return err
	}
	defer pr.Close()
	rep, err := pr.Run(ctx, sizes, f.iters, f.warmup)
	if err != nil {
		return err
	}
	if role.Rank == 0 {
		if err := writeP2P(cmd.OutOrStdout(), f, rep); err != nil {
			return err
		}
		if f.png != "" {
			if err := writeP2PPNGFile(f.png, rep); err != nil {
				return err
			}
		}
		if f.calibrationOut != "" {
			g1, err := bench.RankGPU(f.gpus, 1)
			if err != nil {
				return err
			}
			if err := writeP2PCalibration(f.calibrationOut, rep, pr.Ordinal(), g1); err != nil {
				return err
			}
		}
	}
	return pr.Finish()
}
