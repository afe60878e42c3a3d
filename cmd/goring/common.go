package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/topo"
)

// loadTopo resolves --topo (a preset name or a goring.topo/v1 file) and
// --nodes (0: as given) into a validated topology. Reading the file happens
// here because package topo does no I/O.
func loadTopo(spec string, nodes int) (*topo.Topology, error) {
	if spec == "" {
		return nil, fmt.Errorf("--topo is required (a preset: %s; or a goring.topo/v1 JSON file)", strings.Join(topo.PresetNames(), ", "))
	}
	var t *topo.Topology
	if looksLikeFile(spec) {
		data, err := os.ReadFile(spec)
		if err != nil {
			return nil, fmt.Errorf("--topo %s: %w", spec, err)
		}
		if t, err = topo.Parse(data); err != nil {
			return nil, fmt.Errorf("--topo %s: %w", spec, err)
		}
	} else {
		var err error
		if t, err = topo.Preset(spec); err != nil {
			return nil, err
		}
	}
	if nodes != 0 {
		return t.Repeat(nodes)
	}
	return t, nil
}

// loadCalibration reads --calibration FILE, a goring.calibration/v1
// document (calib.ReadFile). Every error names the flag and the file.
func loadCalibration(file string) (*calib.Calibration, error) {
	cal, err := calib.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--calibration %s: %w", file, err)
	}
	return cal, nil
}

// looksLikeFile tells a path from a preset name: presets are bare words.
func looksLikeFile(s string) bool {
	if strings.ContainsAny(s, "/.") {
		return true
	}
	_, err := os.Stat(s)
	return err == nil
}

// checkOutFile refuses, before any measurement starts, an output file
// that could not be written at the end: a missing folder, or a folder
// where the file would be. Runs of minutes (bench, calibrate, tune ucc)
// otherwise found out only after their last size, and lost it.
func checkOutFile(flag, path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s %s: a folder, not a file", flag, path)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s %s: no folder %s to write it in", flag, path, dir)
	}
	return nil
}
