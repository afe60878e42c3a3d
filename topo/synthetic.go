package topo

import "fmt"

// Synthetic builds a cluster of nodes identical nodes with gpus GPUs each,
// for shapes no preset has: tests that sweep 1-64 nodes x 1-8 GPUs, and the
// emulated nodes of `goring bench` on one host. Each node is an H100 node
// of clusterB's kind scaled to gpus GPUs: an NV6 full mesh, the GPUs split
// evenly over sockets sockets (joined by one UPI bundle each pair), a PCIe
// Gen5 host link per GPU, and one 200 Gb/s NIC rail per GPU behind the
// GPU's PCIe switch. The figures are clusterB's (see preset_clusterb.go).
func Synthetic(name string, nodes, gpus, sockets int) (*Topology, error) {
	if gpus < 1 || sockets < 1 || sockets > gpus {
		return nil, fmt.Errorf("synthetic topology: %d GPUs over %d sockets: want 1 <= sockets <= GPUs", gpus, sockets)
	}
	n := Node{Name: "node0", Sockets: sockets}
	for g := 0; g < gpus; g++ {
		s := g * sockets / gpus
		n.addGPU("H100", s, s, g)
	}
	n.fullMesh(NVLink, 6, nvlinkAlphaUS, nvlink4GBps)
	n.hostLinks(pcieAlphaUS, pcieGen5GBps)
	for a := 0; a < sockets; a++ {
		for b := a + 1; b < sockets; b++ {
			n.addLink(UPI, HostEndpoint(a), HostEndpoint(b), 1, upiAlphaUS, upiSapphireGBps)
		}
	}
	r := rails(gpus, ibRailAlphaUS, ib200GBps)
	for g := 0; g < gpus; g++ {
		n.addNIC(g, n.GPUs[g].Socket, g, r[g], nicAlphaUS, pcieAlphaUS, pcieGen5GBps)
	}
	t := &Topology{Schema: Schema, Name: name, Nodes: []Node{n}, Rails: r}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("synthetic topology: %w", err)
	}
	return t.Repeat(nodes)
}

// SweepShape is the Synthetic cluster the tests of the schedules and the
// executor sweep: named synthNxG, its GPUs over two sockets when there are
// several (so the two-socket schedules are exercised). It panics on a shape
// Synthetic refuses: callers pass constants.
func SweepShape(nodes, gpus int) *Topology {
	sockets := 1
	if gpus > 1 {
		sockets = 2
	}
	t, err := Synthetic(fmt.Sprintf("synth%dx%d", nodes, gpus), nodes, gpus, sockets)
	if err != nil {
		panic(err)
	}
	return t
}
