package topo

// clusterB is cluster B of Parallel Rings (section IV-A): four H100 80GB per node
// in a full NVLink mesh (NV6 between every pair), one AMD EPYC 9454 socket,
// four 200 Gb/s InfiniBand ports, one dedicated to each GPU. As on NVIDIA's
// HGX boards, GPU i and NIC i are taken to share a PCIe switch, so
// GPUDirect RDMA from GPU i to rail i does not cross the root complex.
func init() {
	register("clusterB", func() (Node, []Rail) {
		n := Node{Sockets: 1} // one EPYC 9454 (Parallel Rings IV-A)
		for i := 0; i < 4; i++ {
			n.addGPU("H100", 0, 0, i)
		}
		// NV6 per pair: 6 NVLink 4 links x 25 GB/s (Parallel Rings IV-A "NV6";
		// H100 data sheet: 18 links, 900 GB/s bidirectional per GPU).
		n.fullMesh(NVLink, 6, nvlinkAlphaUS, nvlink4GBps)
		// H100 SXM: PCIe Gen5 x16, 50 GB/s effective (H100 data sheet).
		n.hostLinks(pcieAlphaUS, pcieGen5GBps)
		// 4 x 200 Gb/s InfiniBand = 25 GB/s per port (Parallel Rings IV-A); the
		// adapters (ConnectX-7 class) sit in PCIe Gen5 x16 next to their GPU.
		r := rails(4, ibRailAlphaUS, ib200GBps)
		for i := 0; i < 4; i++ {
			n.addNIC(i, 0, i, r[i], nicAlphaUS, pcieAlphaUS, pcieGen5GBps)
		}
		return n, r
	})
}
