package topo

// beluga is a GPU node of the Beluga cluster (Calcul Quebec / Digital
// Research Alliance of Canada) as Multi-path model describes it (section 5,
// Fig. 1): four V100 with two NVLink 2 links between every pair, all four
// GPUs attached to one of the two CPUs and its NUMA node. The CPUs are two
// Xeon Gold 6148 (Alliance documentation for Beluga) joined by UPI. The
// inter-node network is one EDR InfiniBand port; which socket it hangs off
// is not documented, socket 0 (the GPUs' socket) is assumed.
func init() {
	register("beluga", func() (Node, []Rail) {
		n := Node{Sockets: 2}
		for i := 0; i < 4; i++ {
			n.addGPU("V100", 0, 0, 0) // one NUMA node with one CPU (Multi-path model section 5)
		}
		// Two NVLink 2 links per pair, 25 GB/s each (Multi-path model section 5;
		// V100 data sheet).
		n.fullMesh(NVLink, 2, nvlinkAlphaUS, nvlink2GBps)
		// V100 SXM2 hangs off PCIe Gen3 x16: 12 GB/s effective (V100 data
		// sheet: PCIe Gen3 32 GB/s bidirectional).
		n.hostLinks(pcieAlphaUS, pcieGen3GBps)
		// Xeon Gold 6148 (Skylake): three UPI links at 10.4 GT/s, 20.8 GB/s
		// each (Intel ARK).
		n.addLink(UPI, HostEndpoint(0), HostEndpoint(1), 3, upiAlphaUS, upiSkylakeGBps)
		// One EDR 100 Gb/s port = 12.5 GB/s (Alliance documentation: EDR
		// InfiniBand), in a PCIe Gen3 x16 slot (ConnectX-5 data sheet).
		r := rails(1, ibRailAlphaUS, ib100GBps)
		n.addNIC(0, 0, -1, r[0], nicAlphaUS, pcieAlphaUS, pcieGen3GBps)
		return n, r
	})
}
