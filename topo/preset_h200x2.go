package topo

// h200x2 is the lent 2xH200 machine (docs/gpu.md "Reference figures"): two H200 joined by all 18 NVLink 4 links (NV18), each GPU on a
// PCIe Gen5 x16 link to the host. One socket is assumed (both GPUs share one
// root complex, as the host-staged measurement saw no socket crossing); the
// machine has no inter-node network, so no NICs and no rails.
//
// goring topo detect on that machine (a VM) sees each GPU's 18 NVLinks end
// at NVSwitch ports (NVML remote type "switch"): the two GPUs are two of an
// HGX board's eight. For two GPUs a direct 18-link bundle and a switch
// plane cost the same (one peer copy's startup, the narrower side's 18
// links), so the preset keeps docs/gpu.md's "NV18" as one direct link.
func init() {
	register("h200x2", func() (Node, []Rail) { return nv18Pair("H200"), nil })
}

// nv18Pair is a node of two GPUs of model joined by all 18 NVLink 4 links,
// each on a PCIe Gen5 x16 link to one host: the lent 2xH200 and 2xH100
// machines (preset_h100x2.go).
func nv18Pair(model string) Node {
	n := Node{Sockets: 1}
	n.addGPU(model, 0, 0, -1)
	n.addGPU(model, 0, 0, -1)
	// NV18: 18 links x 26.56 GB/s ~ 478 GB/s per direction, measured
	// (docs/gpu.md "Reference figures"); startup nvlinkAlphaUS (preset_figures.go).
	n.addLink(NVLink, GPUEndpoint(0), GPUEndpoint(1), 18, nvlinkAlphaUS, nvlink4MeasuredGBps)
	// PCIe Gen5 x16 host path: 50 GB/s effective (H200 data sheet:
	// PCIe Gen5 128 GB/s bidirectional; docs/gpu.md records the pipelined
	// host-staged path at 51 GB/s with 8 MiB chunks).
	n.hostLinks(pcieAlphaUS, pcieGen5GBps)
	return n
}
