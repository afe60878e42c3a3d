// Package topo describes the machines goring runs on: nodes, their GPUs,
// sockets and NICs, the links between them with a Hockney cost each (alpha,
// the startup in microseconds; beta, the bandwidth in GB/s), and the NIC
// rails that join nodes.
//
// A Topology is plain data with a stable JSON form (schema goring.topo/v1),
// built from a preset, read from a file, or discovered on a real machine by
// the topo/detect package. Every consumer (the model, the schedules, the
// simulator, the UCC layer) reads the same value, so every rank that loads
// the same topology computes the same plan without talking to the others.
//
// # Getting a topology
//
//	t, err := topo.Preset("clusterA") // one node; see PresetNames
//	t, err = t.Repeat(4)               // four identical nodes, node0..node3
//	b, err := topo.Marshal(t)          // goring.topo/v1 JSON
//	t, err = topo.Parse(b)             // and back, validated
//
// Parse always validates; Validate names the first problem precisely
// (which node, GPU, NIC, rail or link, and what is wrong).
//
// # The link graph
//
// Inside a node, links join endpoints written "gpu:N", "host:S" (socket S:
// its root complex and memory), "switch:N" (an NVSwitch plane), "nic:R" and
// "rail:R". A Link bundles Count parallel links of one kind; BetaGBps is one
// link's rate in one direction.
//
// Every GPU has a PCIe link to its socket's host: the host-staged path of
// Multi-path model (a transfer staged through host memory crosses it twice). Socket
// links (kind upi, also for xGMI) join hosts.
//
// NICs: NIC R serves rail R. Its port is a link of kind nic from "nic:R" to
// "rail:R", the node's port onto rail R's switch, at the rail's rate. The
// NIC's PCIe link goes to its socket's host; where the GPU and the NIC sit
// behind one PCIe switch (dgx-h100, clusterB) a second PCIe link joins the
// NIC straight to that GPU, which is the GPUDirect RDMA path that never
// crosses the root complex, so a route from that GPU to its rail takes two
// hops (pcie, nic) instead of three. On ascend-8p the RoCE port is on the
// NPU itself and the NIC has no host link at all. The rail between two
// nodes' "rail:R" ports is Topology.Rails[R] (its alpha is the switch and
// wire latency).
//
// # Routing
//
// Node.Route(from, to) gives the hops of the path with the fewest hops,
// the widest of those (largest narrowest-link bandwidth), then a fixed
// choice; each Hop names a link and its direction. Hosts and switches
// forward bytes; a NIC only forwards between its port and PCIe; GPUs and
// rail ports never forward, so a route never hides a GPU-staged path: the
// model builds those from two routes on purpose.
//
//	hops, _ := n.Route(topo.GPUEndpoint(0), topo.GPUEndpoint(3))
//	alphaUS, GBps := n.PathCost(hops) // summed startups, narrowest link
//
// Between nodes, Topology.RailRoute(srcNode, srcGPU, dstNode, dstGPU, r)
// gives the source node's hops from its GPU to "rail:r" and the destination
// node's hops from "rail:r" to its GPU; RailPathCost adds the rail.
//
// # Figures
//
// Presets cite a source by every figure (preset_figures.go and each
// preset_*.go): the papers in shared/seeds, docs/gpu.md's measurements on the
// lent 2xH200 machine, and vendor data sheets. Bandwidths are effective
// rates (what a copy achieves), startups are reasoned in comments; the
// calibrate command measures both on real hardware.
//
// The network-namespace testbed (tests/netns/testbed.sh) is a topology too:
// Testbed builds it from the testbed's parameters, its rails' rate as tc
// writes it read by ParseTCRate; MeasuredTestbed is a run's, with the
// copy figures measured. Its GPU form (Testbed.GPU, MeasuredGPUTestbed) is
// the testbed of a run on device memory: GPUs joined by NVLink inside a
// node, rail bytes staged over PCIe and copied by the CPU.
//
// This package is pure: no cgo, no I/O beyond encoding the value it is given.
package topo
