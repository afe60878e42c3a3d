package topo

// narval is a GPU node of the Narval cluster (Calcul Quebec / Digital
// Research Alliance of Canada) as Multi-path model describes it (section 5, Fig. 3):
// four A100 in a full mesh with four NVLink 3 links per pair, eight NUMA
// nodes, each GPU in a NUMA node of its own (one memory channel and six
// cores), so a host-staged transfer between two GPUs crosses between NUMA
// nodes. The CPUs are two AMD EPYC 7413 (Alliance documentation), GPUs 0,1
// on the first and 2,3 on the second; the NUMA ids (1, 3, 5, 7) are
// illustrative: Multi-path model only says the GPUs' NUMA nodes differ. Package
// topo's host endpoint is the socket, so a host path between GPUs of one
// socket shows up here as the GPUs' differing NUMA fields, which the model
// can charge for. One HDR 200 Gb/s InfiniBand port (Alliance documentation)
// on socket 0 is assumed.
func init() {
	register("narval", func() (Node, []Rail) {
		n := Node{Sockets: 2, NUMANodes: 8} // eight NUMA nodes (Multi-path model section 5)
		for i := 0; i < 4; i++ {
			n.addGPU("A100", i/2, 2*i+1, 0)
		}
		// Four NVLink 3 links per pair, 25 GB/s each (Multi-path model section 5;
		// A100 data sheet: 12 links, 600 GB/s bidirectional).
		n.fullMesh(NVLink, 4, nvlinkAlphaUS, nvlink3GBps)
		// A100 SXM4: PCIe Gen4 x16, 25 GB/s effective (A100 data sheet).
		n.hostLinks(pcieAlphaUS, pcieGen4GBps)
		// EPYC 7413 (Milan): four xGMI-2 links between the sockets, 36 GB/s
		// each (AMD EPYC 7003 platform guide); kind upi covers xGMI.
		n.addLink(UPI, HostEndpoint(0), HostEndpoint(1), 4, upiAlphaUS, xgmiMilanGBps)
		// HDR 200 Gb/s = 25 GB/s (Alliance documentation), PCIe Gen4 x16
		// (ConnectX-6 data sheet).
		r := rails(1, ibRailAlphaUS, ib200GBps)
		n.addNIC(0, 0, -1, r[0], nicAlphaUS, pcieAlphaUS, pcieGen4GBps)
		return n, r
	})
}
