package topo

import "fmt"

// Testbed describes the network-namespace testbed (tests/netns/testbed.sh,
// docs/netns.md): Nodes namespaces of PPN rank processes each, Rails rails
// of one veth per node, every rail rate-limited by tc.
type Testbed struct {
	Nodes, PPN, Rails int
	// RailGBps is one rail's rate per direction (tc's rate, GB/s);
	// RailAlphaUS the one-way start-up cost of a message over a rail
	// (UCX over TCP over a veth pair, measured: docs/netns.md).
	RailGBps, RailAlphaUS float64
	// ShmGBps and ShmAlphaUS are a message between two ranks of one node
	// (UCX shared memory, single copy), measured the same way.
	ShmGBps, ShmAlphaUS float64
}

// Testbed figures measured on the shared 2-core development machine
// (docs/netns.md, "Calibration"); goring bench --netns and goring topo
// testbed use them unless told otherwise. They matter little beside the
// rails' rate: a 4 MiB block takes 130 ms on a 250 Mbit/s rail.
const (
	// UCX tag latency over a rail (UCX_TLS=tcp, ucx_perftest -t tag_lat
	// between two node namespaces): median 9.5-30 µs under load.
	TestbedRailAlphaUS = 30
	// Two ranks of one node (self,sm): goring's 2-rank allgather of 16 MiB
	// in 9.1 ms, both ways at once; the start-up cost is UCX's shared
	// memory plus the executor's, a few µs when the machine is idle.
	TestbedShmAlphaUS = 5
	TestbedShmGBps    = 1.8
)

// Topology is the testbed as a goring.topo/v1 cluster, so that the
// simulator predicts what a testbed run measures. A rank stands where a GPU
// stands in the other presets: local rank g of a node is "GPU g", owns
// rail g % Rails (GPU i owns HCA i, as in Parallel Rings III-A) and reaches
// it through its socket's host, and two ranks of a node reach each other
// over one direct link with the shared-memory figures (kind nvlink: the
// GPU-to-GPU link of the format; on the testbed it is a memory copy). The
// NIC port of rail r carries RailGBps each way; the PCIe links are left at
// a rate no rail reaches, so only the rails and the shared-memory copies
// decide the time.
func (tb Testbed) Topology() (*Topology, error) {
	if tb.Nodes < 1 || tb.PPN < 1 || tb.Rails < 1 || tb.Rails > tb.PPN {
		return nil, fmt.Errorf("testbed: %d nodes x %d ranks, %d rails: want at least one of each and no more rails than ranks per node", tb.Nodes, tb.PPN, tb.Rails)
	}
	if tb.RailGBps <= 0 || tb.ShmGBps <= 0 || tb.RailAlphaUS < 0 || tb.ShmAlphaUS < 0 {
		return nil, fmt.Errorf("testbed: rates must be positive and start-up costs not negative")
	}
	n := Node{Name: "node0", Sockets: 1}
	for g := 0; g < tb.PPN; g++ {
		n.addGPU("rank", 0, 0, g%tb.Rails)
	}
	n.fullMesh(NVLink, 1, tb.ShmAlphaUS, tb.ShmGBps)
	n.hostLinks(0, pcieGen5GBps)
	r := rails(tb.Rails, tb.RailAlphaUS, tb.RailGBps)
	for i := 0; i < tb.Rails; i++ {
		n.addNIC(i, 0, -1, r[i], 0, 0, pcieGen5GBps)
	}
	t := &Topology{Schema: Schema, Name: fmt.Sprintf("testbed-%dx%dx%d", tb.Nodes, tb.PPN, tb.Rails), Nodes: []Node{n}, Rails: r}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("testbed topology: %w", err)
	}
	return t.Repeat(tb.Nodes)
}
