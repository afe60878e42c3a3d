package main

import (
	"fmt"
	"os"

	"github.com/goring-hpc/goring/measure"
)

// writeP2PCalibration writes rep's calibration (measure.P2PCalibration)
// to path (rank 0, after the table). g0 and g1 are the ranks' GPU ordinals.
func writeP2PCalibration(path string, rep *measure.P2PReport, g0, g1 int) error {
	cal, err := measure.P2PCalibration(rep, g0, g1)
	if err != nil {
		return err
	}
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
