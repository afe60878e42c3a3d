package topo

// Link figures shared by the presets, each with its source. Bandwidths are
// GB/s (1e9 bytes/s) in ONE direction for ONE link; startups are the
// microseconds a transfer pays once per link it crosses.
//
// Raw PCIe and NVLink rates come from the standards and vendor data sheets;
// where a copy cannot reach the raw rate (packet headers, flow control), the
// preset uses an effective rate and says so: the model splits messages by
// these figures, so they should be what a copy achieves, not a headline.
const (
	// NVLink 2 (V100): 25 GB/s per link per direction; V100 SXM2 has six
	// links, 300 GB/s bidirectional in total (NVIDIA Tesla V100 data sheet).
	nvlink2GBps = 25.0
	// NVLink 3 (A100, A30): 25 GB/s per link per direction; A100 SXM4 has
	// twelve links, 600 GB/s bidirectional in total (NVIDIA A100 data sheet);
	// A30's NVLink bridge joins two GPUs with four links, 200 GB/s
	// bidirectional (NVIDIA A30 data sheet).
	nvlink3GBps = 25.0
	// NVLink 4 (H100, H200): 18 links, 900 GB/s bidirectional in total, so
	// 25 GB/s per link per direction (NVIDIA H100 and H200 data sheets).
	nvlink4GBps = 25.0
	// NVLink 4 as measured on the lent 2xH200 machine: 18 links x 26.56 GB/s
	// ~ 478 GB/s per direction (docs/gpu.md "Reference figures";
	// 26.56 GB/s is the link's signalling rate, two lanes of
	// 106.25 Gb/s, a peer copy reached 380-394 GB/s of it).
	nvlink4MeasuredGBps = 26.56

	// NVLink startup: a GPU peer copy costs a copy-engine launch plus the
	// first bytes' flight, about 1-2 us for small copies (cudaMemcpyPeerAsync
	// latency in NVIDIA's p2pBandwidthLatencyTest is 1-2 us on NVLink
	// systems). One figure for all generations: the launch dominates.
	nvlinkAlphaUS = 1.5
	// Through an NVSwitch: a route crosses two GPU-switch links
	// (gpu -> switch -> gpu), each carrying half of one peer copy's startup,
	// so that GPU-to-GPU costs the same nvlinkAlphaUS as a direct link.
	nvswitchAlphaUS = nvlinkAlphaUS / 2

	// PCIe x16, one direction. Raw: Gen3 8 GT/s, Gen4 16 GT/s, Gen5 32 GT/s
	// per lane with 128b/130b coding gives 15.75, 31.5 and 63 GB/s (PCI-SIG
	// base specifications 3.0/4.0/5.0). A pinned cudaMemcpy reaches about
	// 80% of that after TLP headers and flow control (bandwidthTest results
	// commonly 12-13, 25-26 and 50-55 GB/s), which the effective rates use.
	pcieGen3GBps = 12.0
	pcieGen4GBps = 25.0
	pcieGen5GBps = 50.0
	// PCIe startup of a host<->device copy: a copy launch (~1 us) plus a
	// DMA round trip across the root complex (~1 us). docs/gpu.md's host-staged
	// measurements (51 GB/s at 8 MiB chunks, 23 GB/s at 2 MiB) imply a much
	// larger per-chunk cost on that path; that is the staging
	// synchronisation (the Multi-path model paper's epsilon, section 3), which the model adds
	// per staged chunk, not a property of the link.
	pcieAlphaUS = 2.0

	// Socket links. Intel UPI 1.0 (Skylake/Cascade Lake Xeon Gold 6148):
	// 10.4 GT/s, 20.8 GB/s per link per direction, three links per socket
	// (Intel Xeon Scalable data sheet). Ice Lake (Xeon Gold 6338): 11.2 GT/s,
	// 22.4 GB/s, three links (Intel ARK). Sapphire Rapids (DGX H100's Xeon
	// Platinum 8480C): UPI 2.0 at 16 GT/s, 32 GB/s, four links (Intel ARK).
	// AMD EPYC 7003 (Milan) xGMI-2: 16 lanes at 18 GT/s, 36 GB/s per link per
	// direction, up to four links between two sockets (AMD EPYC 7003 platform
	// guide).
	upiSkylakeGBps  = 20.8
	upiIceLakeGBps  = 22.4
	upiSapphireGBps = 32.0
	xgmiMilanGBps   = 36.0
	// A socket hop adds the remote memory access latency over a local one,
	// about 0.1-0.2 us (Intel and AMD memory latency checker figures); 0.5 us
	// leaves room for the coherence traffic a DMA through the remote root
	// complex causes.
	upiAlphaUS = 0.5

	// NIC line rates, Gb/s / 8 = GB/s per port per direction: EDR InfiniBand
	// 100 Gb/s = 12.5; HDR 200 Gb/s = 25; NDR 400 Gb/s (ConnectX-7) = 50
	// (InfiniBand Trade Association roadmap; NVIDIA ConnectX-6/7 data sheets).
	// 200 GbE RoCE = 25 (IEEE 802.3cd/bs).
	ib100GBps = 12.5
	ib200GBps = 25.0
	ib400GBps = 50.0
	roce200G  = 25.0
	// NIC startup per side: posting a work request and the NIC's own
	// pipeline. GPUDirect RDMA ping-pong latency over InfiniBand is about
	// 2-3 us end to end (OSU latency with CUDA buffers on ConnectX-6/7); it
	// is split as 1 us per node's NIC plus the rail's switch hop below.
	nicAlphaUS = 1.0
	// Rail switch and wire: one InfiniBand switch hop is 0.1-0.13 us
	// (NVIDIA Quantum/Quantum-2 data sheets), cables ~5 ns/m; 0.5 us covers
	// a leaf switch plus the serialisation of a first packet.
	ibRailAlphaUS = 0.5
	// RoCE: NIC and Ethernet switch each add more than InfiniBand (switch
	// hop 0.5-1 us for data-centre Ethernet ASICs); 1.5 us per side's NIC and
	// 1 us for the switch.
	roceNICAlphaUS  = 1.5
	roceRailAlphaUS = 1.0
)

// DefaultAlphaUS is the startup the presets give a link of kind k, for
// topologies built from discovery rather than measurement (topo/detect):
// calibration replaces it later. Unknown kinds get 0.
func DefaultAlphaUS(k LinkKind) float64 {
	switch k {
	case NVLink:
		return nvlinkAlphaUS
	case NVSwitch:
		return nvswitchAlphaUS
	case PCIe:
		return pcieAlphaUS
	case UPI:
		return upiAlphaUS
	case NIC:
		return nicAlphaUS
	}
	return 0
}

// DefaultRailAlphaUS is the rail (switch and wire) startup the InfiniBand
// presets use.
const DefaultRailAlphaUS = ibRailAlphaUS

// DefaultSocketLinkGBps is what a discovered node's socket link is given
// when nothing says better: the slowest UPI figure above (Skylake, 20.8 GB/s
// per link); discovery cannot read UPI/xGMI rates, and a low figure keeps
// plans from leaning on a link they cannot see.
const DefaultSocketLinkGBps = upiSkylakeGBps

// PCIeEffectiveGBps is what a copy achieves over a PCIe link of generation
// gen (1-6) and width lanes, one direction: 80% of the raw rate, as for the
// presets' effective rates. Raw per lane: Gen1 2.5 GT/s and Gen2 5 GT/s with
// 8b/10b coding (0.25, 0.5 GB/s); Gen3-5 8/16/32 GT/s with 128b/130b
// (0.985, 1.969, 3.938 GB/s); Gen6 64 GT/s with FLIT mode (~7.56 GB/s after
// FEC and CRC, PCI-SIG 6.0 overview). 0 for an unknown generation or a
// non-positive width.
func PCIeEffectiveGBps(gen, width int) float64 {
	perLane := map[int]float64{1: 0.25, 2: 0.5, 3: 8.0 * 128 / 130 / 8, 4: 16.0 * 128 / 130 / 8, 5: 32.0 * 128 / 130 / 8, 6: 7.56}[gen]
	if width <= 0 {
		return 0
	}
	return 0.8 * perLane * float64(width)
}
