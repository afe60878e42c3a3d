package topo

import "fmt"

// Testbed describes the network-namespace testbed (tests/netns/testbed.sh,
// docs/netns.md): Nodes namespaces of PPN rank processes each, Rails rails
// of one veth per node, every rail rate-limited by tc, and every rank of
// every node a process on the same few CPU cores.
type Testbed struct {
	Nodes, PPN, Rails int
	// RailGBps is one rail's rate per direction (tc's rate, GB/s);
	// RailAlphaUS the one-way start-up cost of a message over a rail
	// (UCX over TCP over a veth pair, measured: docs/netns.md).
	RailGBps, RailAlphaUS float64
	// CopyGBps is the machine's memory-copy throughput that all ranks
	// share (GB/s): shared-memory messages are copies by the CPU, and so is
	// every byte TCP moves, on the cores that run every node. CopyAlphaUS
	// is a message's start-up cost between two ranks of one node (host
	// form only: in the GPU form those messages go over NVLink).
	CopyGBps, CopyAlphaUS float64
	// GPU, when set, makes this the testbed of a --mem cuda run
	// (testbed_gpu.go): the ranks are GPUs joined by NVLink, and only the
	// rail bytes are copied by the CPU. Nil: the host testbed.
	GPU *TestbedGPU
}

// Testbed figures measured on the shared 2-core development machine
// (docs/netns.md, "Calibration"); goring bench --netns and goring topo
// testbed use them unless told otherwise.
const (
	// UCX tag latency over a rail (UCX_TLS=tcp, ucx_perftest -t tag_lat
	// between two node namespaces): median 9.5-30 µs under load.
	TestbedRailAlphaUS = 30
	// The copy throughput of all ranks together: 16 ranks in one node
	// namespace, ring allgather of 4 and 8 MiB validated (every rank copies
	// at once, 15 steps): 240 x bytes / time = 5.2-6.4 GB/s, docs/netns.md.
	TestbedCopyGBps    = 6.0
	TestbedCopyAlphaUS = 5
)

// Topology is the testbed as a goring.topo/v1 cluster, so that the
// simulator predicts what a testbed run measures. A rank stands where a GPU
// stands in the other presets: local rank g of a node is "GPU g" and owns
// rail g % Rails (GPU i owns HCA i, as in Parallel Rings III-A). The NIC
// port of rail r carries RailGBps each way. The rest depends on the form:
// the host form here (hostNode), the GPU form in testbed_gpu.go (gpuNode).
func (tb Testbed) Topology() (*Topology, error) {
	if tb.Nodes < 1 || tb.PPN < 1 || tb.Rails < 1 || tb.Rails > tb.PPN {
		return nil, fmt.Errorf("testbed: %d nodes x %d ranks, %d rails: want at least one of each and no more rails than ranks per node", tb.Nodes, tb.PPN, tb.Rails)
	}
	if tb.RailGBps <= 0 || tb.CopyGBps <= 0 || tb.RailAlphaUS < 0 || tb.CopyAlphaUS < 0 {
		return nil, fmt.Errorf("testbed: rates must be positive and start-up costs not negative")
	}
	r := rails(tb.Rails, tb.RailAlphaUS, tb.RailGBps)
	var n Node
	name := "testbed"
	if tb.GPU == nil {
		n = tb.hostNode(r)
	} else {
		var err error
		if n, err = tb.gpuNode(r); err != nil {
			return nil, err
		}
		name = "testbed-gpu"
	}
	n.Name = "node0"
	t := &Topology{Schema: Schema, Name: fmt.Sprintf("%s-%dx%dx%d", name, tb.Nodes, tb.PPN, tb.Rails), Nodes: []Node{n}, Rails: r}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("testbed topology: %w", err)
	}
	return t.Repeat(tb.Nodes)
}

// hostNode is one node of the host testbed. Every byte a rank moves
// crosses its link to the host ("pcie" in the format): to a rank of its
// node (shared memory, host to host) and to its rail's NIC (TCP copies it
// too). That link carries the rank's share of the machine's copy
// throughput, CopyGBps / (Nodes x PPN) each way, which is how the
// simulator, which has links and no CPUs, sees every rank of every node
// compete for the same cores. A message between two ranks of a node
// crosses two such links, so each carries half of CopyAlphaUS: the message
// starts in CopyAlphaUS, as SharedGPU and the GPU form split theirs. The
// NIC's own host link is left at a rate no rail reaches.
func (tb Testbed) hostNode(r []Rail) Node {
	n := Node{Sockets: 1}
	for g := 0; g < tb.PPN; g++ {
		n.addGPU("rank", 0, 0, g%tb.Rails)
	}
	n.hostLinks(tb.CopyAlphaUS/2, tb.copyShareGBps())
	for i := 0; i < tb.Rails; i++ {
		n.addNIC(i, 0, -1, r[i], 0, 0, pcieGen5GBps)
	}
	return n
}

// copyShareGBps is one rank's share of the machine's copy throughput:
// every rank of every node copies on the same cores.
func (tb Testbed) copyShareGBps() float64 {
	return tb.CopyGBps / float64(tb.Nodes*tb.PPN)
}

// MeasuredTestbed is the topology of a testbed run: nodes x ppn ranks on
// rails rails, each at tc's rate (as tc writes it: ParseTCRate) with a
// message start-up of railAlphaUS, and the copy figures measured on the
// development machine (TestbedCopyGBps, TestbedCopyAlphaUS). goring bench
// --netns predicts its rows on it.
func MeasuredTestbed(nodes, ppn, rails int, tcRate string, railAlphaUS float64) (*Topology, error) {
	gbps, err := ParseTCRate(tcRate)
	if err != nil {
		return nil, err
	}
	tb := Testbed{Nodes: nodes, PPN: ppn, Rails: rails, RailGBps: gbps, RailAlphaUS: railAlphaUS,
		CopyGBps: TestbedCopyGBps, CopyAlphaUS: TestbedCopyAlphaUS}
	return tb.Topology()
}
