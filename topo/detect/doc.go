// Package detect discovers the machine it runs on and describes it as a
// topo.Topology, the same value a preset or a goring.topo/v1 file gives.
//
// Two sources, each read in one place:
//
//   - NVML (through github.com/NVIDIA/go-nvml, which loads libnvidia-ml
//     with dlopen, so this package builds and runs where no driver is):
//     GPU count, name, UUID, PCI bus id, PCIe capability and, per NVLink,
//     whether it is up, the PCI bus id at its far end and its version.
//     nvml.go is the only file that calls NVML, through the small device
//     and library interfaces that tests fake.
//   - sysfs, read through an fs.FS rooted at /sys: a GPU's NUMA node
//     (bus/pci/devices/<id>/numa_node), the socket of that NUMA node (the
//     physical_package_id of its first CPU), the PCI path of each device
//     (to see which GPUs and NICs share a PCIe switch), and the
//     InfiniBand/RoCE ports under class/infiniband with their rates.
//
// Build turns those facts into links, and is pure: tests hand it fake
// NVML answers and an fstest.MapFS and compare the result with what the
// hardware it imitates looks like (the clusterA and dgx-h100 presets).
//
// A typical use:
//
//	t, err := detect.Detect()
//	if detect.IsNoDriver(err) {
//		// no NVIDIA driver here: use a preset or a file instead
//	}
//
// What discovery cannot see it fills with the presets' defaults and says
// so in Build's documentation: startups (topo.DefaultAlphaUS) and socket
// link rates (topo.DefaultSocketLinkGBps). Calibration (goring calibrate)
// measures them later.
package detect
