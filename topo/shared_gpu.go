package topo

import "fmt"

// SharedGPU is one GPU that Procs processes share, as goring bench --mem
// cuda --gpus 1 --np Procs runs them (docs/gpu.md "One GPU in the
// simulator"). Each process is a GPU entry of its own (Share = Procs, so
// the simulator gives each a Procs-th of the GPU's copy and reduction
// rates), joined to the others through a hub that stands for the GPU's
// memory: a transfer between two processes is a copy inside the GPU, and
// every process's link to the hub carries CopyGBps / Procs each way, so
// transfers of all processes together move at most CopyGBps.
//
// StepUS is what a transfer costs before its bytes move. Processes on one
// GPU do not run at once: without MPS each has its own context, and the
// GPU switches between them, so a step of a collective waits for every
// process's turn whatever its size. The figure is fitted to a measurement,
// not derived (SharedH100x4StepUS says how); it is charged half on each of
// a transfer's two links.
type SharedGPU struct {
	Model    string
	Procs    int
	CopyGBps float64 // what the transfers of all processes move together (bytes copied per second / 1e9)
	StepUS   float64
}

// The lent H100 shared by four processes, both figures fitted to goring
// bench's multiwrite allgather alone (one step per call, every process
// writing to all three others at once; 782-3310 us at 16-256 MiB per rank,
// 2026-11-25, docs/gpu.md "One GPU in the simulator"); the other
// algorithms of that run are the check (sim's
// TestSharedH100x4AgainstMeasured).
const (
	// SharedH100CopyGBps: what the transfers of all four processes move
	// together, 1225 GB/s, below the 1.49 TB/s one copy alone moves inside
	// an H100 (cuda.test): each process's copy of its own block runs
	// beside them and the simulator charges it to the GPU's memory apart.
	SharedH100CopyGBps = 1225
	// SharedH100x4StepUS: a transfer's cost before its bytes move, 620 us:
	// every process's turn on the GPU.
	SharedH100x4StepUS = 620
)

// h100-shared4: the lent H100 with goring bench's four processes on it.
func init() {
	register("h100-shared4", func() (Node, []Rail) {
		return SharedGPU{Model: "H100", Procs: 4, CopyGBps: SharedH100CopyGBps, StepUS: SharedH100x4StepUS}.node(), nil
	})
}

// Topology is s as a one-node goring.topo/v1 topology.
func (s SharedGPU) Topology() (*Topology, error) {
	if s.Procs < 2 {
		return nil, fmt.Errorf("shared GPU: %d processes: want at least 2", s.Procs)
	}
	if s.CopyGBps <= 0 || s.StepUS < 0 {
		return nil, fmt.Errorf("shared GPU: copy rate %g GB/s, step %g us: want a positive rate and a step not negative", s.CopyGBps, s.StepUS)
	}
	t := &Topology{Schema: Schema, Name: fmt.Sprintf("%s-shared%d", s.Model, s.Procs), Nodes: []Node{s.node()}}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("shared GPU topology: %w", err)
	}
	return t, nil
}

func (s SharedGPU) node() Node {
	n := Node{Name: "node0", Sockets: 1}
	for g := 0; g < s.Procs; g++ {
		n.addGPU(s.Model, 0, 0, NoRail)
		n.GPUs[g].Share = s.Procs
	}
	n.hostLinks(s.StepUS/2, s.CopyGBps/float64(s.Procs))
	return n
}
