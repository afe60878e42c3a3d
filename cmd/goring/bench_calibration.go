package main

import (
	"fmt"

	"github.com/goring-hpc/goring/bench"
)

// useCalibration reads --calibration (goring bench COLL): the file must
// load, and fit every node of the job's topology (GPU count and model, as
// calib.Calibration.CheckNode says) with a pair it measured; it needs
// --mem cuda and the push engine (--ipc). Each program is then annotated
// with its step loads, and each rank's push engine splits its transfers
// within the node as mpath.Planner decides (bench.CalibrationPlanners).
// The launcher and every rank run the same check, so a bad file stops the
// job before any rank starts.
func (j *benchJob) useCalibration(f *benchFlags) error {
	if f.calibrationOut != "" {
		return fmt.Errorf("--calibration-out is for bench p2p, which fits the paths it writes")
	}
	if f.calibration == "" {
		return nil
	}
	if f.mem != "cuda" || !f.ipc {
		return fmt.Errorf("--calibration %s: splits transfers of goring's push engine: it needs --mem cuda and --ipc", f.calibration)
	}
	cal, err := loadCalibration(f.calibration)
	if err != nil {
		return err
	}
	planners, err := bench.CalibrationPlanners(j.cfg.Topo, cal, f.topo == "")
	if err != nil {
		return fmt.Errorf("--calibration %s: %w", f.calibration, err)
	}
	j.planners = planners
	j.cfg.StepLoads = true
	return nil
}
