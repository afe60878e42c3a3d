package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/topo/detect"
	"github.com/goring-hpc/goring/ucx"
	"github.com/goring-hpc/goring/units"
)

// goring calibrate measures the Hockney figures (alpha: start-up time,
// beta: bandwidth) of the paths this machine has, so that the model and
// the simulator can use measured numbers instead of data-sheet ones.
//
// Today it measures one path: host memory between two processes on this
// machine over UCX (shared memory and CMA single copy: what goring bench
// moves bytes with), by an osu_latency-style ping-pong over a range of
// sizes, fitted with model.FitHockney. GPU paths (direct NVLink, GPU-staged,
// host-staged: seed 003) need the CUDA data path, which goring does not
// have yet; they are reported as skipped, with the reason, never invented.

func init() { subcommands = append(subcommands, newCalibrateCmd) }

// CalibrationSchema names the JSON document calibrate writes.
const CalibrationSchema = "goring.calibration/v1"

// Calibration is the JSON document of goring calibrate.
type Calibration struct {
	Schema  string            `json:"schema"`
	Host    string            `json:"host"`
	Date    string            `json:"date"`
	UCXTLS  string            `json:"ucx_tls"`
	Paths   []CalibratedPath  `json:"paths"`
	Skipped []string          `json:"skipped"`
	Extra   map[string]string `json:"extra,omitempty"`
}

// CalibratedPath is one measured path with its samples and fit.
type CalibratedPath struct {
	Path     string             `json:"path"`
	From     string             `json:"from"`
	To       string             `json:"to"`
	AlphaUS  float64            `json:"alpha_us"`
	BetaGBps float64            `json:"beta_GBps"`
	RelRMS   float64            `json:"rel_rms"`
	Outliers []int64            `json:"outlier_bytes"`
	Samples  []CalibratedSample `json:"samples"`
}

// CalibratedSample is the one-way time of one size.
type CalibratedSample struct {
	Bytes int64   `json:"bytes"`
	US    float64 `json:"us"`
}

type calibrateFlags struct {
	bytes         string
	iters, warmup int
	out           string
	json          bool
}

func newCalibrateCmd() *cobra.Command {
	f := &calibrateFlags{}
	cmd := &cobra.Command{
		Use:   "calibrate [--out FILE] [--bytes a:b] [--iters I] [--warmup W] [--json]",
		Short: "measure alpha/beta of this machine's paths (today: host memory between two processes over UCX)",
		Long: `calibrate measures the start-up time (alpha, us) and bandwidth (beta, GB/s) of
the paths of this machine with an osu_latency-style ping-pong between two local
processes, and fits the Hockney model t = alpha + bytes/beta to the one-way
times (model.FitHockney: least squares with outliers left out).

Measured today: host memory between two processes over UCX (UCX_TLS, default
self,sm). GPU paths need goring's CUDA data path, which does not exist yet:
they are listed under "skipped" with the reason.

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
	return cmd
}

func calibrateSizes(f *calibrateFlags) ([]int64, error) {
	sizes, err := units.ParseRange(f.bytes)
	if err != nil {
		return nil, fmt.Errorf("--bytes: %w", err)
	}
	distinct := map[int64]bool{}
	for _, s := range sizes {
		if s <= 0 {
			return nil, fmt.Errorf("--bytes: sizes must be positive, got %d", s)
		}
		distinct[s] = true
	}
	if len(distinct) < 2 {
		return nil, errors.New("--bytes: a fit needs at least two distinct sizes")
	}
	return sizes, nil
}

func runCalibrate(cmd *cobra.Command, f *calibrateFlags) error {
	sizes, err := calibrateSizes(f)
	if err != nil {
		return err
	}
	if launch.IsRank() {
		return calibrateRank(cmd, f, sizes)
	}
	if err := ucx.Load(); err != nil {
		return fmt.Errorf("cannot load UCX: %w", err)
	}
	args := []string{"calibrate"}
	cmd.Flags().Visit(func(fl *pflag.Flag) { args = append(args, "--"+fl.Name+"="+fl.Value.String()) })
	return launch.RunLocal(cmd.Context(), launch.LocalJob{NP: 2, Args: args, Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()})
}

// calibrateRank is one of the two ping-pong processes; rank 0 fits and
// reports.
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
	rj, err := joinRankJob(ctx, role, 0, role.Rank, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer rj.close()
	lat, err := bench.PingPong(ctx, rj.tr, role.Rank, sizes, f.iters, f.warmup, ucx.Alloc, ucx.Free)
	if err != nil {
		rj.waitVerdict()
		return err
	}
	if err := rj.sess.Barrier(ctx); err != nil {
		return err
	}
	if role.Rank == 0 {
		cal, err := buildCalibration(sizes, lat)
		if err != nil {
			return err
		}
		if err := writeCalibration(cmd.OutOrStdout(), f, cal); err != nil {
			return err
		}
	}
	return rj.finish()
}

// buildCalibration fits the samples and notes what was not measured.
func buildCalibration(sizes []int64, latUS []float64) (*Calibration, error) {
	host, _ := os.Hostname()
	tls := os.Getenv("UCX_TLS")
	if tls == "" {
		tls = defaultTLS()
	}
	p := CalibratedPath{Path: "host", From: "process 0 (host memory)", To: "process 1 (host memory)", Outliers: []int64{}}
	samples := make([]model.Sample, len(sizes))
	for i, n := range sizes {
		samples[i] = model.Sample{Bytes: float64(n), TimeUS: latUS[i]}
		p.Samples = append(p.Samples, CalibratedSample{Bytes: n, US: latUS[i]})
	}
	fit, err := model.FitHockney(samples)
	if err != nil {
		return nil, fmt.Errorf("fitting the host path: %w", err)
	}
	p.AlphaUS, p.BetaGBps, p.RelRMS = fit.AlphaUS, fit.BetaGBps, fit.RelRMS
	for _, i := range fit.Outliers {
		p.Outliers = append(p.Outliers, sizes[i])
	}
	cal := &Calibration{Schema: CalibrationSchema, Host: host, Date: time.Now().UTC().Format(time.RFC3339), UCXTLS: tls, Paths: []CalibratedPath{p}}
	cal.Skipped = append(cal.Skipped, gpuPathsSkipped())
	return cal, nil
}

// gpuPathsSkipped says why no GPU path was measured.
func gpuPathsSkipped() string {
	t, err := detect.Detect()
	var nd *detect.NoDriverError
	switch {
	case errors.As(err, &nd):
		return "GPU paths (direct, gpu-staged, host-staged): no NVIDIA driver on this machine"
	case err != nil:
		return "GPU paths (direct, gpu-staged, host-staged): GPU discovery failed: " + err.Error()
	case t.NumGPUs() == 0:
		return "GPU paths (direct, gpu-staged, host-staged): no GPU found"
	}
	return fmt.Sprintf("GPU paths (direct, gpu-staged, host-staged) between the %d GPUs found: not measured, goring has no CUDA data path yet", t.NumGPUs())
}

func writeCalibration(out io.Writer, f *calibrateFlags, cal *Calibration) error {
	doc, err := json.MarshalIndent(cal, "", "  ")
	if err != nil {
		return err
	}
	doc = append(doc, '\n')
	if f.out != "" {
		if err := os.WriteFile(f.out, doc, 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if f.json {
		_, err := out.Write(doc)
		return err
	}
	p := cal.Paths[0]
	fmt.Fprintf(out, "# goring calibrate: %s, %s -> %s over UCX (UCX_TLS=%s), one-way time of a ping-pong\n", cal.Host, p.From, p.To, cal.UCXTLS)
	fmt.Fprintf(out, "%-12s%18s%18s\n", "# Size", "Latency (us)", "Bandwidth (GB/s)")
	for _, s := range p.Samples {
		fmt.Fprintf(out, "%-12d%18.2f%18.3f\n", s.Bytes, s.US, float64(s.Bytes)/s.US/1e3)
	}
	fmt.Fprintf(out, "# fit (Hockney, t = alpha + bytes/beta): path %s alpha %.3f us, beta %.3f GB/s, relative RMS residual %.1f%%", p.Path, p.AlphaUS, p.BetaGBps, 100*p.RelRMS)
	if len(p.Outliers) > 0 {
		fmt.Fprintf(out, ", sizes left out as outliers: %v", p.Outliers)
	}
	fmt.Fprintln(out)
	for _, s := range cal.Skipped {
		fmt.Fprintf(out, "# skipped: %s\n", s)
	}
	if f.out != "" {
		fmt.Fprintf(out, "# written to %s\n", f.out)
	}
	return nil
}
