package calib

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/goring-hpc/goring/jsondoc"
	"github.com/goring-hpc/goring/model"
)

// The calibration document (goring.calibration/v1) that `goring calibrate`
// writes: one Hockney fit per measured path, with the samples it came
// from, and, optionally, how the direct path and each staged path of a GPU
// pair slow each other down when they run together (model/contention.go),
// with the together samples that were fitted. The model's splitter takes
// its figures (NewSplitter, paths.go), the simulator's CLI takes link
// figures from it (CalibrateTopology, topo.go), and so does the engine
// (mpath.Planner). docs/contracts.md is the contract; fields added to v1 are
// optional, so files written before them still load and mean what they
// meant (no contention: the paths are independent, as the Multi-path model
// assumes).

// Schema names the calibration document.
const Schema = "goring.calibration/v1"

// Calibration is the goring.calibration/v1 document.
type Calibration struct {
	Schema string `json:"schema"`
	Host   string `json:"host"`
	Date   string `json:"date"`
	UCXTLS string `json:"ucx_tls"`
	// GPUs and GPUModel describe the machine the GPU paths were measured
	// on (optional; 0 and "" when unknown, as in files written before
	// them). Readers refuse the file for a node of another GPU count or
	// model (CheckNode).
	GPUs     int              `json:"gpus,omitempty"`
	GPUModel string           `json:"gpu_model,omitempty"`
	Paths    []CalibratedPath `json:"paths"`
	// Contention holds the direct path of a GPU pair timed together with
	// one of its staged paths, and the slowdowns fitted to those times
	// (optional; absent: the paths do not slow each other).
	Contention []CalibratedContention `json:"contention,omitempty"`
	Skipped    []string               `json:"skipped"`
	Extra      map[string]string      `json:"extra,omitempty"`
}

// CalibratedPath is one measured path with its samples and fit.
type CalibratedPath struct {
	Path string `json:"path"` // "direct", "host", "gpu:K"
	From string `json:"from"` // "GPU 0", or a process for the host-memory path
	To   string `json:"to"`
	// ChunkBytes is the chunk a staged path was pipelined in (optional:
	// files written before it leave it out; see model.MeasuredStagedPath for what
	// the model makes of a staged path without it).
	ChunkBytes int64              `json:"chunk_bytes,omitempty"`
	AlphaUS    float64            `json:"alpha_us"`
	BetaGBps   float64            `json:"beta_GBps"`
	RelRMS     float64            `json:"rel_rms"`
	Outliers   []int64            `json:"outlier_bytes"`
	Samples    []CalibratedSample `json:"samples"`
}

// CalibratedSample is the one-way time of one size.
type CalibratedSample struct {
	Bytes int64   `json:"bytes"`
	US    float64 `json:"us"`
}

// CalibratedContention is the direct path of a GPU pair timed together
// with one of the pair's staged paths, that path carrying a share of the
// bytes, and the contention fitted to those times (model.FitContention).
type CalibratedContention struct {
	Path string `json:"path"` // the staged path: "host" or "gpu:K"
	From string `json:"from"`
	To   string `json:"to"`
	// DirectSlowdown and StagedSlowdown are the fitted Contention.
	DirectSlowdown float64 `json:"direct_slowdown"`
	StagedSlowdown float64 `json:"staged_slowdown"`
	RelRMS         float64 `json:"rel_rms"`
	// Outliers are indices into Samples that the fit left out.
	Outliers []int                  `json:"outlier_samples"`
	Samples  []model.TogetherSample `json:"samples"`
}

// Contention returns the fitted contention as the model uses it.
func (c CalibratedContention) Contention() model.Contention {
	return model.Contention{DirectSlowdown: c.DirectSlowdown, StagedSlowdown: c.StagedSlowdown}
}

// Load reads and validates a calibration document. It is the
// entry point for a library that has the file open (the engine, the team
// layer); NewSplitter turns the result into a Splitter.
func Load(r io.Reader) (*Calibration, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	return Parse(data)
}

// Parse decodes and validates a calibration document. Unknown
// fields are accepted: a later writer of v1 may add optional ones, which
// this reader does not need to understand.
func Parse(data []byte) (*Calibration, error) {
	var c Calibration
	if err := jsondoc.Decode(data, &c, false); err != nil {
		return nil, fmt.Errorf("calibration JSON: %w", err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Encode writes c as `goring calibrate` does: indented JSON and a newline.
// A document that Parse read encodes to the same bytes (for the
// layout Encode itself writes).
func (c *Calibration) Encode() ([]byte, error) {
	doc, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(doc, '\n'), nil
}

// Validate checks what a reader relies on: the schema, finite non-negative
// startups, positive bandwidths and times, slowdowns and shares in [0, 1).
func (c *Calibration) Validate() error {
	if c.Schema != Schema {
		return fmt.Errorf("calibration JSON: schema %q, want %q", c.Schema, Schema)
	}
	if c.GPUs < 0 {
		return fmt.Errorf("calibration: gpus %d: want 0 (unknown) or more", c.GPUs)
	}
	for i, p := range c.Paths {
		if err := p.validate(); err != nil {
			return fmt.Errorf("calibration: paths[%d] (%s %s -> %s): %w", i, p.Path, p.From, p.To, err)
		}
	}
	for i, t := range c.Contention {
		if err := t.validate(); err != nil {
			return fmt.Errorf("calibration: contention[%d] (direct with %s, %s -> %s): %w", i, t.Path, t.From, t.To, err)
		}
	}
	return nil
}

func (p CalibratedPath) validate() error {
	switch {
	case !finiteNonNeg(p.AlphaUS) || !finitePos(p.BetaGBps):
		return fmt.Errorf("alpha %g us, beta %g GB/s: want a finite alpha >= 0 and beta > 0", p.AlphaUS, p.BetaGBps)
	case p.Path == "" || p.From == "" || p.To == "":
		return fmt.Errorf("path, from and to must be named")
	case !finiteNonNeg(p.RelRMS):
		return fmt.Errorf("rel_rms %g: want a finite value >= 0", p.RelRMS)
	case p.ChunkBytes < 0:
		return fmt.Errorf("chunk_bytes %d: want 0 (unknown) or more", p.ChunkBytes)
	}
	for j, s := range p.Samples {
		if s.Bytes <= 0 || !finitePos(s.US) {
			return fmt.Errorf("samples[%d]: %d bytes in %g us: want both positive", j, s.Bytes, s.US)
		}
	}
	return nil
}

func (t CalibratedContention) validate() error {
	switch {
	case t.Path == "" || t.From == "" || t.To == "":
		return fmt.Errorf("path, from and to must be named")
	case !inUnit(t.DirectSlowdown) || !inUnit(t.StagedSlowdown):
		return fmt.Errorf("slowdowns %g (direct) and %g (staged): want each in [0, 1)", t.DirectSlowdown, t.StagedSlowdown)
	case !finiteNonNeg(t.RelRMS):
		return fmt.Errorf("rel_rms %g: want a finite value >= 0", t.RelRMS)
	}
	for j, s := range t.Samples {
		if err := s.Validate(); err != nil {
			return fmt.Errorf("samples[%d]: %w", j, err)
		}
	}
	for _, o := range t.Outliers {
		if o < 0 || o >= len(t.Samples) {
			return fmt.Errorf("outlier_samples: index %d outside the %d samples", o, len(t.Samples))
		}
	}
	return nil
}

func finitePos(x float64) bool    { return x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }
func finiteNonNeg(x float64) bool { return x >= 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }

// inUnit is the range of a slowdown, as model.Contention takes it: [0, 1).
func inUnit(x float64) bool { return x >= 0 && x < 1 }
