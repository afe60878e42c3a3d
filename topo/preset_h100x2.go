package topo

// h100x2 is the lent 2xH100 machine (docs/gpu.md "Two GPUs"): two H100 SXM
// joined by all 18 NVLink 4 links (nvidia-smi topo -m: NV18), each GPU on a
// PCIe Gen5 x16 link to the host, one NUMA node, no inter-node network. The
// links are the same NVLink 4 and PCIe Gen5 as h200x2's, so the preset
// takes the same figures; what goring's push engine gets from them on this
// machine (a 37-43 us startup, 383-396 GB/s, a host path that slows the
// direct copy) comes from a calibration (goring bench p2p --calibration-out)
// given to goring sim, not from the preset.
func init() {
	register("h100x2", func() (Node, []Rail) { return nv18Pair("H100"), nil })
}
