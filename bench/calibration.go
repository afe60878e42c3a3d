package bench

import (
	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/cudaexec"
	"github.com/goring-hpc/goring/pushplan"
	"github.com/goring-hpc/goring/topo"
)

// CalibrationPlanners are the push engine's planners of a job on tp from
// cal (pushplan.TopologyPlanners): every node of tp must be one cal fits
// (GPU count and model, calib.Calibration.CheckNode) with a pair it
// measured. An emulated topology (EmulatedTopology, no --topo) names H100s
// while its GPUs are this machine's, so there cal is checked against the
// driver's name of GPU 0, where a driver answers. The launcher and every
// rank build the same planners, so a file that does not fit stops the job
// before any rank starts.
func CalibrationPlanners(tp *topo.Topology, cal *calib.Calibration, emulated bool) (*pushplan.Planners, error) {
	gpuModel := ""
	if emulated {
		if name, err := cuda.DeviceName(0); err == nil {
			gpuModel = name
		}
	}
	return pushplan.TopologyPlanners(tp, cal, gpuModel, cudaexec.DefaultMaxStage)
}
