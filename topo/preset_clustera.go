package topo

// clusterA is cluster A of Parallel Rings (section IV-A): four A30 per node, two
// per socket of two Xeon Gold 6338; the two GPUs of a socket joined by an
// NVLink bridge (NV4), the sockets by UPI; four 100 Gb/s InfiniBand ports,
// two per socket, one dedicated to each GPU (GPU i uses rail i).
func init() {
	register("clusterA", func() (Node, []Rail) {
		n := Node{Sockets: 2}
		for i := 0; i < 4; i++ {
			s := i / 2 // GPUs 0,1 on socket 0; 2,3 on socket 1 (Parallel Rings, Fig. 2b)
			n.addGPU("A30", s, s, i)
		}
		// NV4 within a socket: 4 NVLink 3 links x 25 GB/s (Parallel Rings IV-A
		// "NV4"; A30 data sheet: 200 GB/s bidirectional bridge).
		n.addLink(NVLink, GPUEndpoint(0), GPUEndpoint(1), 4, nvlinkAlphaUS, nvlink3GBps)
		n.addLink(NVLink, GPUEndpoint(2), GPUEndpoint(3), 4, nvlinkAlphaUS, nvlink3GBps)
		// A30 is a PCIe Gen4 x16 card (A30 data sheet): 25 GB/s effective.
		n.hostLinks(pcieAlphaUS, pcieGen4GBps)
		// Xeon Gold 6338 (Ice Lake): three UPI links at 11.2 GT/s, 22.4 GB/s
		// each per direction (Intel ARK; Parallel Rings IV-A names the CPU).
		n.addLink(UPI, HostEndpoint(0), HostEndpoint(1), 3, upiAlphaUS, upiIceLakeGBps)
		// 4 x 100 Gb/s InfiniBand = 12.5 GB/s per port (Parallel Rings IV-A),
		// attached to the host (Parallel Rings does not say the NICs share a PCIe
		// switch with the GPUs); the adapter's own slot is PCIe Gen4 x16
		// (ConnectX-6, 100/200 Gb/s, data sheet).
		r := rails(4, ibRailAlphaUS, ib100GBps)
		for i := 0; i < 4; i++ {
			n.addNIC(i, i/2, -1, r[i], nicAlphaUS, pcieAlphaUS, pcieGen4GBps)
		}
		return n, r
	})
}
