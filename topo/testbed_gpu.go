package topo

import "fmt"

// TestbedGPU is what the testbed of a --mem cuda run adds to the host one
// (docs/netns.md, "GPU buffers"): node k's ranks own GPUs of one machine,
// goring's push engine moves device bytes between the ranks of a node over
// NVLink, and between nodes each rank stages its device bytes through
// pinned host memory onto its rail, where TCP moves them as in the host
// testbed.
type TestbedGPU struct {
	// Model is the GPU model, which sets the simulator's rate for local
	// copies and reductions (sim.MemoryGBps).
	Model string
	// NVLinkGBps is what one GPU moves to the other GPUs of its node, each
	// way, all peers together (it reaches them through the machine's
	// NVSwitch); NVLinkAlphaUS is one push's start-up cost.
	NVLinkGBps, NVLinkAlphaUS float64
	// StageGBps is the rate of the staging copy between a GPU and pinned
	// host memory, one direction (PCIe); StageAlphaUS its start-up cost.
	StageGBps, StageAlphaUS float64
}

// Defaults of the GPU form, for the H200 machines the testbed's GPU runs
// use (scripts/device_netns.sh).
const (
	TestbedGPUModel = "H200"
	// goring's push engine on four H200s behind NVSwitch: an allgather of
	// 256 MiB per rank, which runs as messages over the push engine,
	// took 2232.2 µs (docs/gpu.md "On four H200s"), so every GPU received
	// 3 x 256 MiB at 361 GB/s, and sent as much.
	TestbedNVLinkGBps = 360
	// One push's start-up: the push engine's fitted alpha on two H200s
	// (docs/gpu.md "One transfer on two H200s": direct push 31.8 µs).
	TestbedNVLinkAlphaUS = 31.8
	// The staging copy crosses the GPU's PCIe Gen5 x16 link: the presets'
	// effective figure (preset_figures.go; goring's device-to-host and
	// host-to-device copies measured 53.9 and 54.3 GB/s on two H200s,
	// docs/gpu.md "One transfer on two H200s").
	TestbedStageGBps    = pcieGen5GBps
	TestbedStageAlphaUS = pcieAlphaUS
)

// DefaultTestbedGPU is the GPU form with the figures above.
func DefaultTestbedGPU() TestbedGPU {
	return TestbedGPU{Model: TestbedGPUModel, NVLinkGBps: TestbedNVLinkGBps, NVLinkAlphaUS: TestbedNVLinkAlphaUS,
		StageGBps: TestbedStageGBps, StageAlphaUS: TestbedStageAlphaUS}
}

// gpuNode is one node of the GPU testbed. Rank g is GPU g of the node:
//   - to a GPU of its node: over NVLink, one link per GPU into the node's
//     NVSwitch plane ("switch:0") at NVLinkGBps each way, half a push's
//     start-up on each (a route crosses two), as dgx-h100 models its
//     switch. The push engine serves only the peers of the rank's node, so
//     a node's plane is its own even where the machine has one switch.
//   - to its rail: GPU to host memory over PCIe at StageGBps (the staging
//     copy), then host memory to the NIC, which carries the CPU's copies:
//     TCP over a veth copies every byte, on the cores that run every node.
//     That link carries the copy share (CopyGBps / (Nodes x PPN)) of every
//     rank that owns the rail, so the CPU's throughput is charged to rail
//     bytes only, and NVLink traffic does not compete for it.
//
// The simulator moves a flow over all its links at once; the staging
// copies are synchronous, one before the send and one after the receive,
// which at PCIe rate adds a few ms to a 64 MiB block that takes 0.5 s on a
// 1 Gbit/s rail: left out.
func (tb Testbed) gpuNode(r []Rail) (Node, error) {
	g := tb.GPU
	if g.NVLinkGBps <= 0 || g.StageGBps <= 0 || g.NVLinkAlphaUS < 0 || g.StageAlphaUS < 0 {
		return Node{}, fmt.Errorf("testbed: GPU rates must be positive and start-up costs not negative")
	}
	n := Node{Sockets: 1}
	for i := 0; i < tb.PPN; i++ {
		n.addGPU(g.Model, 0, 0, i%tb.Rails)
	}
	if tb.PPN > 1 {
		for i := 0; i < tb.PPN; i++ {
			n.addLink(NVSwitch, GPUEndpoint(i), SwitchEndpoint(0), 1, g.NVLinkAlphaUS/2, g.NVLinkGBps)
		}
	}
	n.hostLinks(g.StageAlphaUS, g.StageGBps)
	for i := 0; i < tb.Rails; i++ {
		owners := (tb.PPN - i + tb.Rails - 1) / tb.Rails // local ranks g with g % Rails == i
		// The NIC's host link stands for the CPU's copies; their start-up
		// is in the rail's measured one (UCX over TCP, end to end).
		n.addNIC(i, 0, -1, r[i], 0, 0, float64(owners)*tb.copyShareGBps())
	}
	return n, nil
}

// MeasuredGPUTestbed is MeasuredTestbed's GPU form: the topology a
// --mem cuda testbed run's prediction simulates, with DefaultTestbedGPU.
func MeasuredGPUTestbed(nodes, ppn, rails int, tcRate string, railAlphaUS float64) (*Topology, error) {
	gbps, err := ParseTCRate(tcRate)
	if err != nil {
		return nil, err
	}
	g := DefaultTestbedGPU()
	tb := Testbed{Nodes: nodes, PPN: ppn, Rails: rails, RailGBps: gbps, RailAlphaUS: railAlphaUS,
		CopyGBps: TestbedCopyGBps, CopyAlphaUS: TestbedCopyAlphaUS, GPU: &g}
	return tb.Topology()
}
