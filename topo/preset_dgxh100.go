package topo

// dgx-h100 is an NVIDIA DGX H100 (DGX H100 user guide): eight H100 SXM,
// each with 18 NVLink 4 links into four NVSwitch chips, two Xeon Platinum
// 8480C sockets (GPUs 0-3 on socket 0, 4-7 on socket 1), and eight
// ConnectX-7 400 Gb/s ports for the compute network, NIC i behind the same
// PCIe switch as GPU i.
//
// The four NVSwitch chips are modelled as ONE plane ("switch:0") that every
// GPU reaches with all 18 links: a route is a single path, and a single
// 18-link bundle describes how a peer copy really spreads over the four
// chips (NVLink traffic is striped across all of a GPU's links), which
// four planes of 4-5 links could not.
func init() {
	register("dgx-h100", func() (Node, []Rail) {
		n := Node{Sockets: 2}
		for i := 0; i < 8; i++ {
			n.addGPU("H100", i/4, i/4, i)
		}
		// 18 NVLink 4 links per GPU into the switch fabric, 25 GB/s each
		// (H100 data sheet: 900 GB/s bidirectional; DGX H100 user guide);
		// half the peer-copy startup per GPU-switch link (preset_figures.go).
		for i := 0; i < 8; i++ {
			n.addLink(NVSwitch, GPUEndpoint(i), SwitchEndpoint(0), 18, nvswitchAlphaUS, nvlink4GBps)
		}
		// PCIe Gen5 x16 per GPU, 50 GB/s effective (H100 data sheet).
		n.hostLinks(pcieAlphaUS, pcieGen5GBps)
		// Xeon Platinum 8480C (Sapphire Rapids): four UPI 2.0 links at
		// 16 GT/s, 32 GB/s each (Intel ARK).
		n.addLink(UPI, HostEndpoint(0), HostEndpoint(1), 4, upiAlphaUS, upiSapphireGBps)
		// Eight ConnectX-7 NDR 400 Gb/s = 50 GB/s each, PCIe Gen5 x16,
		// paired with GPU i on its PCIe switch (DGX H100 user guide).
		r := rails(8, ibRailAlphaUS, ib400GBps)
		for i := 0; i < 8; i++ {
			n.addNIC(i, i/4, i, r[i], nicAlphaUS, pcieAlphaUS, pcieGen5GBps)
		}
		return n, r
	})
}
