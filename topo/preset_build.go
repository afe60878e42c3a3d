package topo

// Helpers the preset files use to write a node down compactly. Every link a
// preset adds is full duplex: NVLink, PCIe, UPI/xGMI and the NIC ports all
// carry their rate in each direction at once.

func (n *Node) addGPU(model string, socket, numa, rail int) {
	n.GPUs = append(n.GPUs, GPU{Index: len(n.GPUs), Model: model, Socket: socket, NUMA: numa, Rail: rail})
}

func (n *Node) addLink(kind LinkKind, a, b string, count int, alphaUS, betaGBps float64) {
	n.Links = append(n.Links, Link{Kind: kind, A: a, B: b, Count: count, AlphaUS: alphaUS, BetaGBps: betaGBps, FullDuplex: true})
}

// addNIC adds NIC r on socket: its port onto the rail ("nic:r" - "rail:r",
// kind nic, at the rail's rate) and its PCIe link to the socket's host.
// sharedGPU >= 0 says the NIC sits behind the same PCIe switch as that GPU
// (DGX-style boards): then a second PCIe link joins the NIC to the GPU
// directly, the GPUDirect RDMA path that never crosses the root complex, and
// routing from the GPU to the rail takes it (two hops instead of three).
// The host link stays, for host-staged traffic. Two PCIe links from one
// switch are a simplification: the switch's uplink to the CPU is shared by
// the GPU's and the NIC's host traffic, which this model counts twice.
func (n *Node) addNIC(r, socket, sharedGPU int, rail Rail, nicAlphaUS, pcieAlphaUS, pcieGBps float64) {
	n.NICs = append(n.NICs, NICPort{Index: r, Socket: socket})
	n.addLink(NIC, NICEndpoint(r), RailEndpoint(r), 1, nicAlphaUS, rail.BetaGBps)
	n.addLink(PCIe, NICEndpoint(r), HostEndpoint(socket), 1, pcieAlphaUS, pcieGBps)
	if sharedGPU >= 0 {
		n.addLink(PCIe, GPUEndpoint(sharedGPU), NICEndpoint(r), 1, pcieAlphaUS, pcieGBps)
	}
}

// fullMesh joins every pair of the node's GPUs with count links.
func (n *Node) fullMesh(kind LinkKind, count int, alphaUS, betaGBps float64) {
	for i := range n.GPUs {
		for j := i + 1; j < len(n.GPUs); j++ {
			n.addLink(kind, GPUEndpoint(i), GPUEndpoint(j), count, alphaUS, betaGBps)
		}
	}
}

// hostLinks gives every GPU its PCIe link to its socket's host: the
// host-staged path of Multi-path model (section 3: a staged transfer through host
// memory crosses this link twice, once per GPU).
func (n *Node) hostLinks(alphaUS, betaGBps float64) {
	for _, g := range n.GPUs {
		n.addLink(PCIe, GPUEndpoint(g.Index), HostEndpoint(g.Socket), 1, alphaUS, betaGBps)
	}
}

func rails(count int, alphaUS, betaGBps float64) []Rail {
	out := make([]Rail, count)
	for i := range out {
		out[i] = Rail{Index: i, AlphaUS: alphaUS, BetaGBps: betaGBps}
	}
	return out
}

// register adds a single-node preset. The constructor runs per call, so
// every caller gets its own copy.
func register(name string, mk func() (Node, []Rail)) {
	presets[name] = func() *Topology {
		n, r := mk()
		n.Name = "node0"
		return &Topology{Schema: Schema, Name: name, Nodes: []Node{n}, Rails: r}
	}
}
