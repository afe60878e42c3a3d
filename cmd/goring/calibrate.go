package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/measure"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/ucx"
	"github.com/goring-hpc/goring/units"
)

// goring calibrate measures the Hockney figures (alpha: start-up time,
// beta: bandwidth) of the paths this machine has, so that the model and
// the simulator can use measured numbers instead of data-sheet ones.
//
// It measures host memory between two processes on this machine over UCX
// (shared memory and CMA single copy: what goring bench moves bytes with),
// by an osu_latency-style ping-pong, and, where there are GPUs, the
// direct and host-staged paths from GPU 0 to every other GPU through
// package cuda (measure/gpu.go). The document, its parser and the
// fits live in package calib so that a library can load what this command
// writes; here are the flags, the ping-pong's processes and the output. What cannot be measured is listed as
// skipped, with the reason, never invented.

func init() { subcommands = append(subcommands, newCalibrateCmd) }

type calibrateFlags struct {
	bytes         string
	iters, warmup int
	out           string
	json          bool
	gpuBytes      string
	chunk         string
	gpuIters      int
	shares        string
}

func newCalibrateCmd() *cobra.Command {
	f := &calibrateFlags{}
	cmd := &cobra.Command{
		Use:   "calibrate [--out FILE] [--bytes a:b] [--iters I] [--warmup W] [--json]",
		Short: "measure alpha/beta of this machine's paths (host memory between two processes over UCX; with GPUs, the GPU paths and how they contend)",
		Long: `calibrate measures the start-up time (alpha, us) and bandwidth (beta, GB/s) of
the paths of this machine with an osu_latency-style ping-pong between two local
processes, and fits the Hockney model t = alpha + bytes/beta to the one-way
times (model.FitHockney: least squares with outliers left out).

Paths: "host" between two processes over UCX (UCX_TLS, default self,sm), and
with GPUs, from GPU 0 to each other GPU, "direct" (one peer copy) and "host"
(staged through pinned memory in --chunk pieces, the two copies overlapped),
over --gpu-bytes. Then the two GPU paths are timed together on the largest
--gpu-bytes, the host path carrying each --shares percentage of it, and how
much they slow each other down is fitted (model.FitContention) into the
document's "contention" entries, which the model's split uses. Without GPUs
those are listed under "skipped" with the reason.

The GPU figures are the links' own, timed from one process. Collectives move
bytes through goring's push engine between processes, which adds a
clear-to-send and a done message to every transfer: for --calibration of
goring bench and sim and for UCC_TL_GORING_CALIBRATION, write the file with
goring bench p2p --mem cuda --calibration-out FILE instead (with this file
the planner split two-GPU collectives that then ran 1.06-1.41x slower;
docs/gpu.md "Collectives with a calibration").

--out FILE writes the JSON document (schema goring.calibration/v1) to FILE;
--json prints it on stdout instead of the table.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runCalibrate(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.bytes, "bytes", "1:64MiB", "message sizes: N, a:b (doubling) or a comma list (at least two sizes)")
	fl.IntVar(&f.iters, "iters", 0, "timed round trips per size (0: as OMB, 1000 up to 8 KiB, 100 above)")
	fl.IntVar(&f.warmup, "warmup", -1, "untimed round trips per size (-1: as OMB)")
	fl.StringVar(&f.out, "out", "", "write the calibration JSON to this file")
	fl.BoolVar(&f.json, "json", false, "print the calibration JSON instead of the table")
	fl.StringVar(&f.gpuBytes, "gpu-bytes", "1MiB:256MiB", "GPU path sizes (at least two)")
	fl.StringVar(&f.chunk, "chunk", "8MiB", "chunk of the host-staged GPU path")
	fl.IntVar(&f.gpuIters, "gpu-iters", 10, "timed copies per GPU path and size")
	fl.StringVar(&f.shares, "shares", "0,4,8,12,16", "percent of the largest --gpu-bytes on the host path when timing it together with the direct path")
	return cmd
}

func calibrateSizes(flag, value string) ([]int64, error) {
	sizes, err := units.ParseRange(value)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flag, err)
	}
	distinct := map[int64]bool{}
	for _, s := range sizes {
		if s <= 0 {
			return nil, fmt.Errorf("--%s: sizes must be positive, got %d", flag, s)
		}
		distinct[s] = true
	}
	if len(distinct) < 2 {
		return nil, fmt.Errorf("--%s: a fit needs at least two distinct sizes", flag)
	}
	return sizes, nil
}

func runCalibrate(cmd *cobra.Command, f *calibrateFlags) error {
	sizes, err := calibrateSizes("bytes", f.bytes)
	if err != nil {
		return err
	}
	if _, err := calibrateSizes("gpu-bytes", f.gpuBytes); err != nil {
		return err
	}
	if chunk, err := units.ParseBytes(f.chunk); err != nil || chunk <= 0 {
		return fmt.Errorf("--chunk %q: want a positive size", f.chunk)
	}
	// bench.Iterations reads any count below 0 as OMB's: refuse them here,
	// as goring bench does, rather than run something else than was asked.
	if f.iters < 0 {
		return fmt.Errorf("--iters %d: want a positive count (0: as OMB)", f.iters)
	}
	if f.warmup < -1 {
		return fmt.Errorf("--warmup %d: want 0 or more (leave it out: as OMB)", f.warmup)
	}
	if f.gpuIters < 1 {
		return fmt.Errorf("--gpu-iters %d: want at least 1", f.gpuIters)
	}
	if _, err := parseShares(f.shares); err != nil {
		return err
	}
	if launch.IsRank() {
		return calibrateRank(cmd, f, sizes)
	}
	if err := checkOutFile("--out", f.out); err != nil {
		return err
	}
	if err := ucx.Load(); err != nil {
		return fmt.Errorf("cannot load UCX: %w", err)
	}
	return launch.RunLocal(cmd.Context(), rankJob(cmd, 2, "calibrate"))
}

// calibrateRank is one of the two ping-pong processes
// (measure.CalibrateRank); rank 0 reports.
func calibrateRank(cmd *cobra.Command, f *calibrateFlags, sizes []int64) (err error) {
	role, err := launch.FromEnv()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("rank %d: %w", role.Rank, err)
		}
	}()
	if role.Size != 2 {
		return fmt.Errorf("calibrate runs on exactly 2 processes, the job has %d", role.Size)
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	gsizes, _ := calibrateSizes("gpu-bytes", f.gpuBytes)
	chunk, _ := units.ParseBytes(f.chunk)
	shares, _ := parseShares(f.shares)
	j := bench.Join{Role: role, OnFailure: exitOnJobFailure(role.Rank, cmd.ErrOrStderr())}
	cal, err := measure.CalibrateRank(ctx, j, measure.HostRun{Sizes: sizes, Iters: f.iters, Warmup: f.warmup},
		measure.GPURun{Sizes: gsizes, Chunk: chunk, Iters: f.gpuIters, Shares: shares})
	if err != nil || role.Rank != 0 {
		return err
	}
	return writeCalibration(cmd.OutOrStdout(), f, cal)
}

func writeCalibration(out io.Writer, f *calibrateFlags, cal *calib.Calibration) error {
	doc, err := cal.Encode()
	if err != nil {
		return err
	}
	if f.out != "" {
		if err := os.WriteFile(f.out, doc, 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if f.json {
		_, err := out.Write(doc)
		return err
	}
	for i, p := range cal.Paths {
		if i == 0 {
			fmt.Fprintf(out, "# goring calibrate: %s, %s -> %s over UCX (UCX_TLS=%s), one-way time of a ping-pong\n", cal.Host, p.From, p.To, cal.UCXTLS)
		} else {
			fmt.Fprintf(out, "\n# path %s: %s -> %s, time of one transfer\n", p.Path, p.From, p.To)
		}
		fmt.Fprintf(out, "%-12s%18s%18s\n", "# Size", "Latency (us)", "Bandwidth (GB/s)")
		for _, s := range p.Samples {
			fmt.Fprintf(out, "%-12d%18.2f%18.3f\n", s.Bytes, s.US, float64(s.Bytes)/s.US/1e3)
		}
		fmt.Fprintf(out, "# fit (Hockney, t = alpha + bytes/beta): path %s %s -> %s alpha %.3f us, beta %.3f GB/s, relative RMS residual %.1f%%", p.Path, p.From, p.To, p.AlphaUS, p.BetaGBps, 100*p.RelRMS)
		if len(p.Outliers) > 0 {
			fmt.Fprintf(out, ", sizes left out as outliers: %v", p.Outliers)
		}
		fmt.Fprintln(out)
	}
	for _, c := range cal.Contention {
		writeContentionTable(out, c)
	}
	for _, s := range cal.Skipped {
		fmt.Fprintf(out, "# skipped: %s\n", s)
	}
	if f.out != "" {
		fmt.Fprintf(out, "# written to %s\n", f.out)
	}
	return nil
}

// writeContentionTable prints a pair's together samples, each against the
// direct path alone at the same size (the median of its share-0 samples),
// and the fitted contention.
func writeContentionTable(out io.Writer, c calib.CalibratedContention) {
	alone := map[int64][]float64{}
	for _, s := range c.Samples {
		if s.Share == 0 {
			alone[s.Bytes] = append(alone[s.Bytes], s.US)
		}
	}
	fmt.Fprintf(out, "\n# together: direct + %s %s -> %s, launched at once, time until both are done\n", c.Path, c.From, c.To)
	fmt.Fprintf(out, "%-12s%10s%10s%14s%18s\n", "# Size", "Share(%)", "Chunks", "Time (us)", "vs direct alone")
	for _, s := range c.Samples {
		vs := "-"
		if ref := model.Median(alone[s.Bytes]); ref > 0 { // NaN where nothing ran alone
			vs = fmt.Sprintf("%.3fx", ref/s.US)
		}
		fmt.Fprintf(out, "%-12d%10.1f%10d%14.2f%18s\n", s.Bytes, 100*s.Share, s.Chunks, s.US, vs)
	}
	fmt.Fprintf(out, "# contention fit: while both run the direct path loses %.1f%% of its bandwidth and the %s path %.1f%% of its own; relative RMS residual %.1f%%",
		100*c.DirectSlowdown, c.Path, 100*c.StagedSlowdown, 100*c.RelRMS)
	if len(c.Outliers) > 0 {
		fmt.Fprintf(out, ", samples left out as outliers: %v", c.Outliers)
	}
	fmt.Fprintln(out)
}
