package team

import (
	"fmt"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/pushplan"
	"github.com/goring-hpc/goring/topo"
)

// UCC_TL_GORING_CALIBRATION=FILE (option calibration=FILE): the push
// engine splits transfers between GPUs of this host over the paths the
// file measured, for each step's load (mpath.Planner, docs/gpu.md).
//
// The context refuses, with the reason in UCC's log, a file that does not
// load, is not a valid goring.calibration/v1 document, or was measured on
// another machine: a GPU count or model that differs from what the CUDA
// driver reports here. A team then uses it when its ranks on this host
// form one node of its topology whose GPU count the file describes, rank
// i of the node taken to drive GPU i (the usual one-process-per-GPU
// binding); other teams (UCC's sub-teams of another size, say) run
// without splitting and say why in Team.noSplit.

// machineCalibration is a calibration checked against this machine.
type machineCalibration struct {
	file     string
	cal      *calib.Calibration
	gpuModel string // the driver's name of GPU 0
}

// loadMachineCalibration reads and checks file ("" : none).
func loadMachineCalibration(file string) (*machineCalibration, error) {
	if file == "" {
		return nil, nil
	}
	cal, err := calib.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("calibration %s: %w", file, err)
	}
	if err := cuda.Load(); err != nil {
		return nil, fmt.Errorf("calibration %s: splits GPU transfers, but %w", file, err)
	}
	n, err := cuda.DeviceCount()
	if err != nil {
		return nil, fmt.Errorf("calibration %s: %w", file, err)
	}
	names := make([]string, n)
	for i := range n {
		names[i], err = cuda.DeviceName(i)
		if err != nil {
			return nil, fmt.Errorf("calibration %s: %w", file, err)
		}
	}
	if err := checkMachine(cal, names); err != nil {
		return nil, fmt.Errorf("calibration %s: %w", file, err)
	}
	mc := &machineCalibration{file: file, cal: cal}
	if n > 0 {
		mc.gpuModel = names[0]
	}
	return mc, nil
}

// checkMachine refuses a calibration of another machine: the GPU count
// and model it records (when it records them) against the driver's.
func checkMachine(cal *calib.Calibration, names []string) error {
	if len(names) == 0 {
		return fmt.Errorf("the CUDA driver sees no GPU")
	}
	if cal.GPUs > 0 && cal.GPUs != len(names) {
		return fmt.Errorf("measured on a machine of %d GPUs; this one has %d", cal.GPUs, len(names))
	}
	if cal.GPUModel == "" {
		return nil
	}
	tp, err := topo.Synthetic("this machine", 1, len(names), 1)
	if err != nil {
		return err
	}
	node := &tp.Nodes[0]
	for i := range node.GPUs {
		node.GPUs[i].Model = names[i]
	}
	if err := cal.CheckNode(node); err != nil {
		return fmt.Errorf("%w (as the CUDA driver names them)", err)
	}
	return nil
}

// usePlanner gives the engine a planner for this team, or says in
// t.noSplit why not. Caller holds t.mu, after connect placed the ranks.
func (t *Team) usePlanner(hosts []string) {
	mc := t.ctx.cal
	if mc == nil || t.engine == nil {
		return
	}
	node, _, ok := t.topo.Locate(t.rank)
	if !ok {
		t.noSplit = "rank not placed"
		return
	}
	// A topology the caller set (goring bench's emulated nodes, several on
	// one host) says itself which ranks make a node; the one made from
	// the hosts must match them.
	for r := range hosts {
		n, _, _ := t.topo.Locate(r)
		if t.setTopo == nil && (n == node) != (hosts[r] == hosts[t.rank]) {
			t.noSplit = "the team's ranks on this host are not one node of its topology"
			return
		}
	}
	// The synthetic node's figures, this machine's GPUs.
	pl, err := pushplan.NodePlanner(t.topo.Nodes[node], mc.cal, mc.gpuModel, t.engine.MaxStage())
	if err != nil {
		t.noSplit = err.Error()
		return
	}
	t.engine.SetPlanner(pushplan.ForRank(t.topo, t.rank, pl))
	t.plans.stepLoads = true
}
