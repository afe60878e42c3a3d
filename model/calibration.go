package model

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// CalibrationSchema names the JSON document of goring calibrate
// (docs/contracts.md, goring.calibration/v1).
const CalibrationSchema = "goring.calibration/v1"

// Calibration is a machine's measured paths: what goring calibrate writes
// and what the splitter can use instead of a topology's nominal figures.
type Calibration struct {
	Schema  string            `json:"schema"`
	Host    string            `json:"host"`
	Date    string            `json:"date"`
	UCXTLS  string            `json:"ucx_tls"`
	Paths   []CalibratedPath  `json:"paths"`
	Skipped []string          `json:"skipped"`
	Extra   map[string]string `json:"extra,omitempty"`
}

// CalibratedPath is one measured path with its samples and Hockney fit.
// Path is "host", "direct" or "gpu:K"; From and To describe the ends
// ("GPU 0", "process 0 (host memory)").
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

// CalibratedSample is the time of one transfer of Bytes.
type CalibratedSample struct {
	Bytes int64   `json:"bytes"`
	US    float64 `json:"us"`
}

// Fit fits the Hockney model to p's samples (FitHockney) and records the
// sizes it left out.
func (p *CalibratedPath) Fit() error {
	samples := make([]Sample, len(p.Samples))
	for i, s := range p.Samples {
		samples[i] = Sample{Bytes: float64(s.Bytes), TimeUS: s.US}
	}
	fit, err := FitHockney(samples)
	if err != nil {
		return fmt.Errorf("fitting path %s %s -> %s: %w", p.Path, p.From, p.To, err)
	}
	p.AlphaUS, p.BetaGBps, p.RelRMS = fit.AlphaUS, fit.BetaGBps, fit.RelRMS
	p.Outliers = p.Outliers[:0]
	for _, i := range fit.Outliers {
		p.Outliers = append(p.Outliers, p.Samples[i].Bytes)
	}
	return nil
}

// ReadCalibration parses and checks a goring.calibration/v1 document.
func ReadCalibration(r io.Reader) (*Calibration, error) {
	var c Calibration
	dec := json.NewDecoder(r)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	if c.Schema != CalibrationSchema {
		return nil, fmt.Errorf("calibration: schema %q, want %q", c.Schema, CalibrationSchema)
	}
	for _, p := range c.Paths {
		if !finiteNonNeg(p.AlphaUS) || !(p.BetaGBps > 0) {
			return nil, fmt.Errorf("calibration: path %s: alpha %g us and beta %g GB/s: want alpha >= 0 and beta > 0", p.Path, p.AlphaUS, p.BetaGBps)
		}
	}
	return &c, nil
}

// GPUPaths are the model's paths from the calibration's GPU measurements
// (direct, gpu:K, host between two GPUs), for Splitter.SetPaths. A staged
// path was measured end to end, pipelined, as one line: it becomes two
// hops of that bandwidth, each with half the startup, so a pipelined run
// of it reproduces the measured line (the slower hop paces the pipeline).
// It is an error when the file holds no GPU direct path.
func (c *Calibration) GPUPaths(o Options) ([]Path, error) {
	var paths []Path
	direct := false
	for _, p := range c.Paths {
		if !strings.HasPrefix(p.From, "GPU") {
			continue // the host-memory path between processes
		}
		switch {
		case p.Path == DirectName:
			paths = append(paths, Path{Name: DirectName, Alpha1US: p.AlphaUS, Beta1GBps: p.BetaGBps})
			direct = true
		case p.Path == HostName || strings.HasPrefix(p.Path, gpuPrefix):
			eps := o.GPUStageEpsilonUS
			if p.Path == HostName {
				eps = o.HostStageEpsilonUS
			}
			paths = append(paths, Path{Name: p.Path, Staged: true, Alpha1US: p.AlphaUS / 2, Beta1GBps: p.BetaGBps,
				Alpha2US: p.AlphaUS / 2, Beta2GBps: p.BetaGBps, EpsilonUS: eps})
		}
	}
	if !direct {
		return nil, fmt.Errorf("calibration of %s (%s) measured no GPU direct path (skipped: %s)", c.Host, c.Date, strings.Join(c.Skipped, "; "))
	}
	return paths, nil
}
