package calib

import (
	"fmt"
	"time"

	"github.com/goring-hpc/goring/model"
)

// Fit fits the Hockney line to p's samples (model.FitHockney) and stores alpha,
// beta, the relative RMS residual and the sizes left out as outliers in p.
// It is what `goring calibrate` does with every path it measures; a
// library that measures paths itself can call it to produce the same
// document.
func (p *CalibratedPath) Fit() error {
	samples := make([]model.Sample, len(p.Samples))
	for i, s := range p.Samples {
		samples[i] = model.Sample{Bytes: float64(s.Bytes), TimeUS: s.US}
	}
	fit, err := model.FitHockney(samples)
	if err != nil {
		return fmt.Errorf("fitting path %s %s -> %s: %w", p.Path, p.From, p.To, err)
	}
	p.AlphaUS, p.BetaGBps, p.RelRMS = fit.AlphaUS, fit.BetaGBps, fit.RelRMS
	p.Outliers = make([]int64, 0, len(fit.Outliers))
	for _, i := range fit.Outliers {
		p.Outliers = append(p.Outliers, p.Samples[i].Bytes)
	}
	return nil
}

// FitCalibratedContention fits t's together samples (model.FitContention) against
// the direct and staged paths the same file measured for t's pair
// (model.MeasuredDirectPath, and model.MeasuredStagedPath with o's epsilon for the
// staged path's family, as PairPaths builds them), and stores the
// slowdowns, the relative RMS residual and the outliers in t.
func (c *Calibration) FitCalibratedContention(t *CalibratedContention, o model.Options) error {
	src, ok1 := parseGPU(t.From)
	dst, ok2 := parseGPU(t.To)
	if !ok1 || !ok2 {
		return fmt.Errorf("contention %s -> %s: want GPUs named \"GPU N\"", t.From, t.To)
	}
	dp, ok := c.gpuPath(model.DirectName, src, dst)
	if !ok {
		return fmt.Errorf("contention of %s %s -> %s: the file has no direct path for the pair", t.Path, t.From, t.To)
	}
	sp, ok := c.gpuPath(t.Path, src, dst)
	if !ok || sp.ChunkBytes <= 0 {
		return fmt.Errorf("contention of %s %s -> %s: the file has no %s path with its chunk size for the pair", t.Path, t.From, t.To, t.Path)
	}
	eps := o.GPUStageEpsilonUS
	if t.Path == model.HostName {
		eps = o.HostStageEpsilonUS
	}
	staged := model.MeasuredStagedPath(sp.Path, sp.BetaGBps, sp.ChunkBytes, eps)
	if staged.Family() == 0 || staged.Family() == model.PathDirect {
		return fmt.Errorf("contention of %q: want a staged path (host or gpu:K)", t.Path)
	}
	fit, err := model.FitContention(model.MeasuredDirectPath(dp.AlphaUS, dp.BetaGBps), staged, t.Samples, o)
	if err != nil {
		return fmt.Errorf("contention of %s %s -> %s: %w", t.Path, t.From, t.To, err)
	}
	t.DirectSlowdown, t.StagedSlowdown, t.RelRMS = fit.DirectSlowdown, fit.StagedSlowdown, fit.RelRMS
	t.Outliers = append(make([]int, 0, len(fit.Outliers)), fit.Outliers...)
	return nil
}

// HostCalibration is the document `goring calibrate` writes for host
// memory between two processes: latUS[i], the one-way time of sizes[i]
// bytes, fitted (CalibratedPath.Fit), measured on host at date with the
// UCX transports tls. GPU paths are added to it separately.
func HostCalibration(sizes []int64, latUS []float64, host, tls string, date time.Time) (*Calibration, error) {
	p := CalibratedPath{Path: "host", From: "process 0 (host memory)", To: "process 1 (host memory)"}
	for i, n := range sizes {
		p.Samples = append(p.Samples, CalibratedSample{Bytes: n, US: latUS[i]})
	}
	if err := p.Fit(); err != nil {
		return nil, err
	}
	return &Calibration{Schema: Schema, Host: host, Date: date.UTC().Format(time.RFC3339), UCXTLS: tls,
		Paths: []CalibratedPath{p}, Skipped: []string{}}, nil
}
