package tune

import (
	"fmt"
	"slices"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/topo"
)

// Regime is where a team's calls run: the topology its processes form,
// the simulator's options for local steps, and the costs of each layer
// there. Goring is goring's layer for calls up to CMax bytes (its C
// path, where one exists) and GoringLarge above.
type Regime struct {
	Name        string
	Topo        *topo.Topology
	Opt         sim.Options
	UCP         Layer
	Goring      Layer
	GoringLarge Layer
	CMax        int64
	// OneDevice, where set with the Leader engine that runs them, prices
	// goring's leader algorithms as one process's device work (the
	// shared-GPU regime) instead of simulating their messages.
	OneDevice *OneDevice
	Leader    Leader
	// Lanes, where above one, are the lanes each rank opened for the
	// host (lanes=auto): goring's host calls take as many as CallLanes
	// says, and a call on L lanes is predicted as its largest lane part
	// run alone, each lane on a core of its own (lanes.go).
	Lanes int
	// Cross, where above zero, is the threads each rank runs
	// cross-memory reads on (crossmem=auto): goring's host calls that
	// CrossCall takes are claimed by that measured rule, not predicted
	// (crossmem.go).
	Cross int
}

// The host figures every layer shares on one host, measured on the
// development machine with the executor's own kernels at 64 MiB
// (BenchmarkHostRates: go test ./tune -run - -bench HostRates -benchtime
// 40x, three runs): a process copies at 17.8-22.9 GB/s and sums float32
// at 13.7-15.6 GB/s, and both cores copying at once move 24.5-25.6 GB/s
// together. They set what bytes cost against messages, the same for
// every layer.
const (
	hostCopyGBps   = 22
	hostReduceGBps = 15
	hostBusGBps    = 25
)

// Host is procs processes on one host exchanging host memory through
// UCX's shared-memory transports: the processes joined through a hub that
// stands for the memory they share (topo.SharedGPU's shape, with the
// host's rates), no startup on the links but each layer's message cost.
// cmax is goring's C path's largest call (0: none).
func Host(procs int, cmax int64) (Regime, error) {
	t, err := topo.SharedGPU{Model: "host", Procs: procs, CopyGBps: hostBusGBps, StepUS: 0}.Topology()
	if err != nil {
		return Regime{}, fmt.Errorf("tune: host regime: %w", err)
	}
	return Regime{
		Name: fmt.Sprintf("host, %d processes", procs), Topo: t,
		Opt: sim.Options{CopyGBps: hostCopyGBps, ReduceGBps: hostReduceGBps, LaunchUS: -1},
		UCP: HostUCP, Goring: HostGoringC, GoringLarge: HostGoringGo, CMax: cmax,
	}, nil
}

// SharedGPU is procs processes sharing one H100 on CUDA memory: the
// h100-shared4 figures (topo.SharedH100CopyGBps, and a step of
// topo.SharedH100x4StepUS for every transfer, each process's turn on the
// GPU, fitted to goring's push). tl/ucp's messages pay UCX's cuda_ipc
// rendezvous on top (CUDAUCPMessageSharedH100US). leader is the engine
// that runs the leader algorithms as one process's work (nil: they are
// simulated as messages like any other).
func SharedGPU(procs int, leader Leader) (Regime, error) {
	t, err := topo.SharedGPU{Model: "H100", Procs: procs, CopyGBps: topo.SharedH100CopyGBps, StepUS: topo.SharedH100x4StepUS}.Topology()
	if err != nil {
		return Regime{}, fmt.Errorf("tune: shared GPU regime: %w", err)
	}
	ucp := CUDAUCP
	ucp.MessageUS = CUDAUCPMessageSharedH100US
	goring := CUDAGoring
	goring.MessageUS = 0 // the fitted step is goring's push
	od := SharedH100OneDevice
	return Regime{Name: fmt.Sprintf("one GPU, %d processes", procs), Topo: t, UCP: ucp, Goring: goring, GoringLarge: goring, OneDevice: &od, Leader: leader}, nil
}

// GPUs is procs processes on one host, one GPU each, on CUDA memory: the
// synthetic H100 node (NVLink between every pair) with the CUDA layers'
// message costs.
func GPUs(procs int) (Regime, error) {
	t, err := topo.Synthetic(fmt.Sprintf("one host, %d GPUs", procs), 1, procs, 1)
	if err != nil {
		return Regime{}, fmt.Errorf("tune: GPU regime: %w", err)
	}
	return Regime{Name: fmt.Sprintf("one host, %d GPUs", procs), Topo: t, UCP: CUDAUCP, Goring: CUDAGoring, GoringLarge: CUDAGoring}, nil
}

// goringLayer is goring's layer for a call of bytes.
func (r Regime) goringLayer(bytes int64) Layer {
	if bytes <= r.CMax {
		return r.Goring
	}
	return r.GoringLarge
}

// Procs is the number of processes of the regime's team.
func (r Regime) Procs() int { return r.Topo.NumGPUs() }

// Calibrated is the GPU regime r on the links a calibration measured
// (calib.Calibration.CalibrateTopology, for a node of gpuModel GPUs: the
// file must be of a machine with as many GPUs as the team has ranks). The
// measured direct path's startup is the push's own, so goring adds
// nothing per message there and tl/ucp what its rendezvous costs beyond
// the push (CUDAUCPOverPushUS). It returns the calibration's notes.
func (r Regime) Calibrated(cal *calib.Calibration, gpuModel string) (Regime, []string, error) {
	t := *r.Topo
	t.Nodes = slices.Clone(t.Nodes)
	for ni := range t.Nodes {
		n := &t.Nodes[ni]
		n.GPUs = slices.Clone(n.GPUs)
		for i := range n.GPUs {
			n.GPUs[i].Model = gpuModel
		}
	}
	ct, notes, err := cal.CalibrateTopology(&t)
	if err != nil {
		return Regime{}, nil, fmt.Errorf("tune: %s with the calibration: %w", r.Name, err)
	}
	r.Topo = ct
	r.Name += ", calibrated"
	r.Goring.MessageUS, r.GoringLarge.MessageUS = 0, 0
	r.UCP.MessageUS = CUDAUCPOverPushUS
	return r, notes, nil
}
