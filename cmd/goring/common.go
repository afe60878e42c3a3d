package main

import (
	"fmt"
	"os"
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
