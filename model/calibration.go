package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// The calibration document (goring.calibration/v1) that `goring calibrate`
// writes and that the model, the simulator's CLI and the engine read: one
// Hockney fit per measured path, with the samples it came from.
// docs/contracts.md is the contract; fields added to v1 are optional, so
// files written before them still load and mean what they meant.

// CalibrationSchema names the calibration document.
const CalibrationSchema = "goring.calibration/v1"

// Calibration is the goring.calibration/v1 document.
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
	Path     string             `json:"path"` // "direct", "host", "gpu:K"
	From     string             `json:"from"` // "GPU 0", or a process for the host-memory path
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

// LoadCalibration reads and validates a calibration document. It is the
// entry point for a library that has the file open (the engine, the team
// layer); the CLI reads the file and calls ParseCalibration.
func LoadCalibration(r io.Reader) (*Calibration, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	return ParseCalibration(data)
}

// ParseCalibration decodes and validates a calibration document. Unknown
// fields are accepted: a later writer of v1 may add optional ones, which
// this reader does not need to understand.
func ParseCalibration(data []byte) (*Calibration, error) {
	var c Calibration
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("calibration JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("calibration JSON: trailing data after the document")
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Encode writes c as `goring calibrate` does: indented JSON and a newline.
// A document that ParseCalibration read encodes to the same bytes (for the
// layout Encode itself writes).
func (c *Calibration) Encode() ([]byte, error) {
	doc, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(doc, '\n'), nil
}

// Validate checks what a reader relies on: the schema, finite non-negative
// startups, positive bandwidths and times.
func (c *Calibration) Validate() error {
	if c.Schema != CalibrationSchema {
		return fmt.Errorf("calibration JSON: schema %q, want %q", c.Schema, CalibrationSchema)
	}
	for i, p := range c.Paths {
		if err := p.validate(); err != nil {
			return fmt.Errorf("calibration: paths[%d] (%s %s -> %s): %w", i, p.Path, p.From, p.To, err)
		}
	}
	return nil
}

func (p CalibratedPath) validate() error {
	switch {
	case p.Path == "" || p.From == "" || p.To == "":
		return fmt.Errorf("path, from and to must be named")
	case !finiteNonNeg(p.AlphaUS) || !finitePos(p.BetaGBps):
		return fmt.Errorf("alpha %g us, beta %g GB/s: want a finite alpha >= 0 and beta > 0", p.AlphaUS, p.BetaGBps)
	case !finiteNonNeg(p.RelRMS):
		return fmt.Errorf("rel_rms %g: want a finite value >= 0", p.RelRMS)
	}
	for j, s := range p.Samples {
		if s.Bytes <= 0 || !finitePos(s.US) {
			return fmt.Errorf("samples[%d]: %d bytes in %g us: want both positive", j, s.Bytes, s.US)
		}
	}
	return nil
}
