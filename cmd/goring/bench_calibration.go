package main

import (
	"fmt"

	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/cudaexec"
	"github.com/goring-hpc/goring/pushplan"
)

// useCalibration reads --calibration (goring bench COLL): the file must
// load, and fit every node of the job's topology (GPU count and model, as
// calib.Calibration.CheckNode says) with a pair it measured; it needs
// --mem cuda and the push engine (--ipc). Each program is then annotated
// with its step loads, and each rank's push engine splits its transfers
// within the node as mpath.Planner decides (pushplan). The launcher
// and every rank run the same check, so a bad file stops the job before
// any rank starts.
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
	tp := j.cfg.Topo
	// The emulated node (no --topo) names H100s; its GPUs are this
	// machine's, so the file is checked against the driver's name.
	gpuModel := ""
	if f.topo == "" {
		if name, err := cuda.DeviceName(0); err == nil {
			gpuModel = name
		}
	}
	planners, err := pushplan.TopologyPlanners(tp, cal, gpuModel, cudaexec.DefaultMaxStage)
	if err != nil {
		return fmt.Errorf("--calibration %s: %w", f.calibration, err)
	}
	j.planners = planners
	j.cfg.StepLoads = true
	return nil
}

// planner is rank's engine planner (nil without --calibration): peers of
// its node by their local GPU index, others never split.
func (j *benchJob) planner(rank int) cudaexec.Planner { return j.planners.ForRank(rank) }
