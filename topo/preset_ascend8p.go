package topo

// ascend-8p is the eight-NPU full-mesh server of MultiWrite (section 3.1,
// Fig. 2, and the test cluster of section 6.1): eight Ascend 910B4 NPUs
// joined pairwise by HCCS at 56 GB/s per link, four 48-core Kunpeng 920
// CPUs, and a RoCE NIC integrated into each NPU with a 200 Gb/s port. The
// NICs therefore hang off their NPU, not off a host: inter-node traffic
// always leaves through an NPU (MultiWrite section 3.2's same-index relay).
//
// Host side: MultiWrite gives the four sockets but not how NPUs attach; two
// NPUs per socket in order is assumed, each on PCIe Gen4 x16 (Ascend 910
// data sheet), and the sockets pairwise joined by one link given the
// Skylake-class UPI figure for lack of a published Kunpeng figure.
func init() {
	register("ascend-8p", func() (Node, []Rail) {
		n := Node{Sockets: 4} // four Kunpeng 920 (MultiWrite section 6.1)
		for i := 0; i < 8; i++ {
			n.addGPU("Ascend 910B4", i/2, i/2, i)
		}
		// One HCCS link per pair at 56 GB/s (MultiWrite section 6.1); startup
		// taken equal to an NVLink peer copy's.
		n.fullMesh(NVLink, 1, nvlinkAlphaUS, 56)
		// PCIe Gen4 x16, 25 GB/s effective (Ascend 910 data sheet: PCIe 4.0).
		n.hostLinks(pcieAlphaUS, pcieGen4GBps)
		// Socket links: assumed, one per pair of sockets at 20.8 GB/s (see
		// above).
		for a := 0; a < 4; a++ {
			for b := a + 1; b < 4; b++ {
				n.addLink(UPI, HostEndpoint(a), HostEndpoint(b), 1, upiAlphaUS, upiSkylakeGBps)
			}
		}
		// One 200 Gb/s RoCE port per NPU = 25 GB/s (MultiWrite section 6.1), RoCE startups (preset_figures.go). The port is on the
		// NPU die: its link to the NPU is given the port's own rate and no
		// extra startup beyond the NIC's.
		r := rails(8, roceRailAlphaUS, roce200G)
		for i := 0; i < 8; i++ {
			n.NICs = append(n.NICs, NICPort{Index: i, Socket: i / 2})
			n.addLink(NIC, NICEndpoint(i), RailEndpoint(i), 1, roceNICAlphaUS, r[i].BetaGBps)
			n.addLink(PCIe, GPUEndpoint(i), NICEndpoint(i), 1, 0, r[i].BetaGBps)
		}
		return n, r
	})
}
