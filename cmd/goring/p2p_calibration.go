package main

import (
	"fmt"
	"os"
	"time"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/measure"
)

// writeP2PCalibration writes rep's calibration (calib.P2PCalibration,
// calib/p2p_calibration.go, which says why bench p2p writes one) to path
// (rank 0, after the table). g0 and g1 are the ranks' GPU ordinals.
func writeP2PCalibration(path string, rep *measure.P2PReport, g0, g1 int) error {
	gpus, err := cuda.DeviceCount()
	if err != nil {
		return err
	}
	name, err := cuda.DeviceName(g0)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	cal := calib.P2PCalibration(rep.Fits, g0, g1, gpus, name, host, time.Now())
	if err := cal.Validate(); err != nil {
		return fmt.Errorf("--calibration-out: %w", err)
	}
	doc, err := cal.Encode()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		return fmt.Errorf("--calibration-out: %w", err)
	}
	return nil
}
