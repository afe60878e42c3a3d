package detect

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/goring-hpc/goring/topo"
)

// GPUInfo is what NVML says about one GPU: the input of Build.
type GPUInfo struct {
	Name     string
	UUID     string
	PCIBusID string // as NVML writes it ("00000000:18:00.0"); Build normalises it
	// PCIeGen and PCIeWidth are the fastest PCIe link the GPU and its slot
	// support (NVML's max link generation and width); 0 when unknown.
	PCIeGen, PCIeWidth int
	NVLinks            []NVLinkInfo // active links only
	// NVLinkPeers are the GPUs NVML reports peer-to-peer capable over
	// NVLink with this one (nil: not asked).
	NVLinkPeers []int
}

// Far-end kinds of an NVLink (NVLinkInfo.RemoteType); "" when NVML did not
// say.
const (
	RemoteGPU    = "gpu"
	RemoteSwitch = "switch"
)

// NVLinkInfo is one active NVLink of a GPU.
type NVLinkInfo struct {
	Link        int    // the link's number on its GPU
	RemoteBusID string // PCI bus id of the far end: a GPU, or an NVSwitch
	Version     uint32 // NVML's NVLink version code (see NVLinkGBps)
	RemoteType  string // RemoteGPU, RemoteSwitch or "" (unknown)
}

// NVLinkGBps is the bandwidth of one NVLink in one direction for NVML's
// version code. NVML numbers versions 1 (1.0), 2 (2.0), 3 (2.2), 4 (3.0),
// 5 (3.1), 6 (4.0), 7 (5.0), 8 (6.0) (nvml.h, nvmlNvlinkVersion_t); older
// drivers returned the plain generation (3 for A100, 4 for H100), which
// lands on the same rates here. Per-link rates from the data sheets:
// NVLink 1 20 GB/s (P100), NVLink 2-4 25 GB/s (V100, A100, H100), NVLink 5
// 50 GB/s (B200: 18 links, 1.8 TB/s bidirectional). Some Hopper drivers
// report code 7 for NVLink 4, so hopper forces 25. 0 for an unknown code.
func NVLinkGBps(version uint32, hopper bool) float64 {
	switch {
	case version == 1:
		return 20
	case version >= 2 && version <= 6:
		return 25
	case version >= 7 && hopper:
		return 25
	case version == 7 || version == 8:
		return 50
	}
	return 0
}

// isHopper tells Hopper GPUs by NVML's product name.
func isHopper(name string) bool {
	for _, m := range []string{"H100", "H200", "H800", "H20", "GH200"} {
		if strings.Contains(name, m) {
			return true
		}
	}
	return false
}

// NormalizeBusID writes a PCI address as sysfs does: lower case, a 4-digit
// domain ("00000000:18:00.0" -> "0000:18:00.0").
func NormalizeBusID(id string) string {
	id = strings.ToLower(strings.TrimSpace(id))
	dom, rest, ok := strings.Cut(id, ":")
	if !ok || strings.Count(rest, ":") != 1 {
		return id
	}
	if len(dom) > 4 {
		dom = dom[len(dom)-4:]
	}
	for len(dom) < 4 {
		dom = "0" + dom
	}
	return dom + ":" + rest
}

// Build turns NVML's view of the GPUs and the sysfs tree sys (rooted where
// /sys is) into a validated one-node topology named name, node nodeName.
//
//   - NUMA node: bus/pci/devices/<id>/numa_node (-1, or unreadable: 0).
//   - Socket: the physical_package_id of the first CPU of that NUMA node
//     (devices/system/node/nodeN/cpulist), numbered densely from 0 in
//     package id order; one socket when sysfs says nothing.
//   - NVLink: active links whose far end is another GPU count towards that
//     pair; links to NVSwitches go to one plane "switch:0", as the
//     dgx-h100 preset models it (remoteOwners tells the two apart, also in
//     virtual machines); links whose far end cannot be placed are left out.
//   - PCIe: every GPU to its socket's host at PCIeEffectiveGBps of its
//     max generation and width (Gen4 x16 when NVML gave none).
//   - Sockets: joined pairwise by one link at topo.DefaultSocketLinkGBps
//     (sysfs does not tell UPI/xGMI rates; calibration should replace it).
//   - NICs: class/infiniband/<dev> with an ACTIVE port 1 and a readable
//     rate, in name order, NIC r serving rail r at the port's rate; its
//     PCIe link goes to its socket's host, and also straight to each GPU
//     behind the same PCIe switch (see sharesSwitch). A GPU's rail is a
//     NIC behind its switch, else on its NUMA node, else its socket, else
//     any, spreading GPUs over equally near NICs (see nearestRail).
//
// Startups are topo.DefaultAlphaUS per kind.
func Build(name, nodeName string, gpus []GPUInfo, sys fs.FS) (*topo.Topology, error) {
	if len(gpus) == 0 {
		return nil, fmt.Errorf("no GPUs found")
	}
	host := readHost(sys)
	n := topo.Node{Name: nodeName, Sockets: host.sockets, NUMANodes: host.numaNodes}
	busOf := map[string]int{}
	for i, g := range gpus {
		bus := NormalizeBusID(g.PCIBusID)
		if prev, dup := busOf[bus]; dup && bus != "" {
			return nil, fmt.Errorf("GPUs %d and %d report the same PCI bus id %s", prev, i, bus)
		}
		busOf[bus] = i
		numa, socket := host.place(sys, bus)
		n.GPUs = append(n.GPUs, topo.GPU{Index: i, Model: g.Name, UUID: g.UUID, Socket: socket, NUMA: numa, PCIBusID: bus, Rail: topo.NoRail})
	}
	if host.numaNodes > 0 {
		for _, g := range n.GPUs {
			if g.NUMA >= n.NUMANodes {
				n.NUMANodes = g.NUMA + 1
			}
		}
	}

	// NVLink: count links per GPU pair and per GPU to the switch plane.
	type pair struct{ a, b int }
	pairLinks := map[pair]int{}
	pairGBps := map[pair]float64{}
	owners := remoteOwners(gpus, busOf)
	for i, g := range gpus {
		switchLinks, switchGBps := 0, 0.0
		for _, l := range g.NVLinks {
			bw := NVLinkGBps(l.Version, isHopper(g.Name))
			if bw == 0 {
				continue // an unknown version: leave the link out rather than guess
			}
			switch j := owners[NormalizeBusID(l.RemoteBusID)]; {
			case j == farSwitch:
				switchLinks++
				if switchGBps == 0 || bw < switchGBps {
					switchGBps = bw
				}
			case j >= 0 && i < j:
				// Count each pair from its lower GPU's side only (both
				// sides see the same links).
				p := pair{i, j}
				pairLinks[p]++
				if pairGBps[p] == 0 || bw < pairGBps[p] {
					pairGBps[p] = bw
				}
			}
		}
		if switchLinks > 0 {
			n.Links = append(n.Links, link(topo.NVSwitch, topo.GPUEndpoint(i), topo.SwitchEndpoint(0), switchLinks, switchGBps))
		}
	}
	pairs := make([]pair, 0, len(pairLinks))
	for p := range pairLinks {
		pairs = append(pairs, p)
	}
	sort.Slice(pairs, func(x, y int) bool {
		if pairs[x].a != pairs[y].a {
			return pairs[x].a < pairs[y].a
		}
		return pairs[x].b < pairs[y].b
	})
	for _, p := range pairs {
		n.Links = append(n.Links, link(topo.NVLink, topo.GPUEndpoint(p.a), topo.GPUEndpoint(p.b), pairLinks[p], pairGBps[p]))
	}

	for i, g := range gpus {
		bw := topo.PCIeEffectiveGBps(g.PCIeGen, g.PCIeWidth)
		if bw == 0 {
			bw = topo.PCIeEffectiveGBps(4, 16)
		}
		n.Links = append(n.Links, link(topo.PCIe, topo.GPUEndpoint(i), topo.HostEndpoint(n.GPUs[i].Socket), 1, bw))
	}
	for a := 0; a < n.Sockets; a++ {
		for b := a + 1; b < n.Sockets; b++ {
			n.Links = append(n.Links, link(topo.UPI, topo.HostEndpoint(a), topo.HostEndpoint(b), 1, topo.DefaultSocketLinkGBps))
		}
	}

	t := &topo.Topology{Schema: topo.Schema, Name: name}
	nics := readNICs(sys)
	for r, nic := range nics {
		numa, socket := host.place(sys, nic.bus)
		nic.numa, nic.socket = numa, socket
		nics[r] = nic
		t.Rails = append(t.Rails, topo.Rail{Index: r, AlphaUS: topo.DefaultRailAlphaUS, BetaGBps: nic.GBps})
		n.NICs = append(n.NICs, topo.NICPort{Index: r, Socket: socket})
		n.Links = append(n.Links, link(topo.NIC, topo.NICEndpoint(r), topo.RailEndpoint(r), 1, nic.GBps))
		pcie := nic.pcieGBps
		if pcie == 0 {
			pcie = topo.PCIeEffectiveGBps(4, 16)
		}
		n.Links = append(n.Links, link(topo.PCIe, topo.NICEndpoint(r), topo.HostEndpoint(socket), 1, pcie))
		for i := range n.GPUs {
			if sharesSwitch(nic.path, host.pciPath(sys, n.GPUs[i].PCIBusID)) {
				n.Links = append(n.Links, link(topo.PCIe, topo.GPUEndpoint(i), topo.NICEndpoint(r), 1, pcie))
			}
		}
	}
	for i := range n.GPUs {
		n.GPUs[i].Rail = nearestRail(&n, i, nics, host, sys)
	}
	t.Nodes = []topo.Node{n}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("detected topology is not valid: %w", err)
	}
	return t, nil
}

// What an NVLink's far end is, besides a GPU index (remoteOwners).
const (
	farSwitch  = -1 // an NVSwitch
	farUnknown = -2 // a GPU this process cannot see, or cannot tell which
)

// remoteOwners decides what each NVLink far end (a normalised bus id) is:
// the GPU of that bus id; else an NVSwitch if NVML says so; else it is
// worked out from who links to it, for virtual machines, where NVML gives
// a far end's host-side bus id while the GPUs show guest-side ones. A far
// end x reached from the set S of GPUs belongs to a GPU outside S (no GPU
// links to itself) that has NVLinks and, when NVML answered the pairwise
// NVLink peer question, whose peers are exactly S. One such GPU: x is it.
// None, and NVML did not call x a GPU: x is a switch (every GPU reaches a
// switch; no GPU is left to own it). Otherwise x is left out as unknown.
func remoteOwners(gpus []GPUInfo, busOf map[string]int) map[string]int {
	reach := map[string]map[int]bool{}
	kind := map[string]string{}
	for i, g := range gpus {
		for _, l := range g.NVLinks {
			x := NormalizeBusID(l.RemoteBusID)
			if reach[x] == nil {
				reach[x] = map[int]bool{}
			}
			reach[x][i] = true
			if l.RemoteType != "" {
				kind[x] = l.RemoteType
			}
		}
	}
	owner := make(map[string]int, len(reach))
	for x, from := range reach {
		if j, ok := busOf[x]; ok {
			owner[x] = j
			continue
		}
		if kind[x] == RemoteSwitch {
			owner[x] = farSwitch
			continue
		}
		var cands []int
		for j, g := range gpus {
			if from[j] || len(g.NVLinks) == 0 {
				continue
			}
			if g.NVLinkPeers != nil && !sameSet(g.NVLinkPeers, from) {
				continue
			}
			cands = append(cands, j)
		}
		switch {
		case len(cands) == 1:
			owner[x] = cands[0]
		case len(cands) == 0 && kind[x] != RemoteGPU:
			owner[x] = farSwitch
		default:
			owner[x] = farUnknown
		}
	}
	return owner
}

func sameSet(list []int, set map[int]bool) bool {
	if len(list) != len(set) {
		return false
	}
	for _, v := range list {
		if !set[v] {
			return false
		}
	}
	return true
}

func link(kind topo.LinkKind, a, b string, count int, gbps float64) topo.Link {
	return topo.Link{Kind: kind, A: a, B: b, Count: count, AlphaUS: topo.DefaultAlphaUS(kind), BetaGBps: gbps, FullDuplex: true}
}

// nearestRail picks GPU i's NIC: among the NICs behind its PCIe switch,
// else on its NUMA node, else on its socket, else all of them, the one that
// the fewest lower-numbered GPUs already use (ties: lowest index), so that
// GPUs spread over equally near NICs as the Parallel Rings paper's rail-dedicated designs
// expect (-1 with no NICs).
func nearestRail(n *topo.Node, i int, nics []nicInfo, host hostInfo, sys fs.FS) int {
	if len(nics) == 0 {
		return topo.NoRail
	}
	g := n.GPUs[i]
	gp := host.pciPath(sys, g.PCIBusID)
	used := make([]int, len(nics))
	for _, h := range n.GPUs[:i] {
		if h.Rail >= 0 {
			used[h.Rail]++
		}
	}
	tiers := []func(nicInfo) bool{
		func(nic nicInfo) bool { return sharesSwitch(nic.path, gp) },
		func(nic nicInfo) bool { return nic.numa == g.NUMA },
		func(nic nicInfo) bool { return nic.socket == g.Socket },
		func(nicInfo) bool { return true },
	}
	for _, near := range tiers {
		best := -1
		for r, nic := range nics {
			if near(nic) && (best < 0 || used[r] < used[best]) {
				best = r
			}
		}
		if best >= 0 {
			return best
		}
	}
	return 0
}

// sharesSwitch says whether two PCI device paths (the components of their
// sysfs device path, "pci0000:17", root port, switch ports..., device) meet
// below the root port, that is behind one PCIe switch: peer-to-peer traffic
// between them need not cross the CPU's root complex.
func sharesSwitch(a, b []string) bool {
	if len(a) < 3 || len(b) < 3 {
		return false
	}
	common := 0
	for common < len(a)-1 && common < len(b)-1 && a[common] == b[common] {
		common++
	}
	// a[0] is the host bridge, a[1] the root port: a common ancestor
	// deeper than that is a switch port.
	return common >= 3
}

// hostInfo is what sysfs says about the CPUs and NUMA nodes.
type hostInfo struct {
	sockets   int
	numaNodes int
	// packageOf maps a CPU's physical_package_id to its dense socket index.
	packageOf map[int]int
}

func readHost(sys fs.FS) hostInfo {
	h := hostInfo{sockets: 1, packageOf: map[int]int{}}
	if nodes, err := fs.Glob(sys, "devices/system/node/node[0-9]*"); err == nil {
		h.numaNodes = len(nodes)
	}
	files, _ := fs.Glob(sys, "devices/system/cpu/cpu[0-9]*/topology/physical_package_id")
	var pkgs []int
	seen := map[int]bool{}
	for _, f := range files {
		if id, err := readInt(sys, f); err == nil && id >= 0 && !seen[id] {
			seen[id] = true
			pkgs = append(pkgs, id)
		}
	}
	sort.Ints(pkgs)
	for i, p := range pkgs {
		h.packageOf[p] = i
	}
	if len(pkgs) > 0 {
		h.sockets = len(pkgs)
	}
	return h
}

// pciPath returns the components of a PCI device's sysfs path, from the
// host bridge to the device, or nil when the link cannot be read.
func (h hostInfo) pciPath(sys fs.FS, bus string) []string {
	if bus == "" {
		return nil
	}
	target, err := fs.ReadLink(sys, "bus/pci/devices/"+bus)
	if err != nil {
		return nil
	}
	var out []string
	for _, c := range strings.Split(path.Clean(path.Join("bus/pci/devices", target)), "/") {
		if strings.HasPrefix(c, "pci") || strings.Count(c, ":") == 2 {
			out = append(out, c)
		}
	}
	return out
}

// deviceDir is where a PCI device's attributes live in sys.
func (h hostInfo) deviceDir(sys fs.FS, bus string) string {
	if target, err := fs.ReadLink(sys, "bus/pci/devices/"+bus); err == nil {
		return path.Clean(path.Join("bus/pci/devices", target))
	}
	return "bus/pci/devices/" + bus
}

// place returns a PCI device's NUMA node and socket (0, 0 when unknown).
func (h hostInfo) place(sys fs.FS, bus string) (numa, socket int) {
	if bus == "" {
		return 0, 0
	}
	numa, err := readInt(sys, h.deviceDir(sys, bus)+"/numa_node")
	if err != nil || numa < 0 {
		return 0, 0
	}
	cpus, err := fs.ReadFile(sys, fmt.Sprintf("devices/system/node/node%d/cpulist", numa))
	if err != nil {
		return numa, 0
	}
	first, ok := firstCPU(string(cpus))
	if !ok {
		return numa, 0
	}
	pkg, err := readInt(sys, fmt.Sprintf("devices/system/cpu/cpu%d/topology/physical_package_id", first))
	if err != nil {
		return numa, 0
	}
	if s, ok := h.packageOf[pkg]; ok {
		return numa, s
	}
	return numa, 0
}

// firstCPU reads the first CPU of a cpulist such as "0-23,48-71".
func firstCPU(list string) (int, bool) {
	list = strings.TrimSpace(list)
	if list == "" {
		return 0, false
	}
	first, _, _ := strings.Cut(list, ",")
	first, _, _ = strings.Cut(first, "-")
	c, err := strconv.Atoi(first)
	return c, err == nil && c >= 0
}

func readInt(sys fs.FS, name string) (int, error) {
	b, err := fs.ReadFile(sys, name)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// nicInfo is one InfiniBand/RoCE device found in sysfs.
type nicInfo struct {
	dev      string
	bus      string
	path     []string
	GBps     float64 // port rate, one direction
	pcieGBps float64
	numa     int
	socket   int
}

// readNICs lists class/infiniband devices whose port 1 is ACTIVE with a
// readable rate, sorted by device name.
func readNICs(sys fs.FS) []nicInfo {
	ents, err := fs.ReadDir(sys, "class/infiniband")
	if err != nil {
		return nil
	}
	var h hostInfo
	var out []nicInfo
	for _, e := range ents {
		dir := "class/infiniband/" + e.Name()
		state, err := fs.ReadFile(sys, dir+"/ports/1/state")
		if err != nil || !strings.Contains(string(state), "ACTIVE") {
			continue
		}
		rateText, err := fs.ReadFile(sys, dir+"/ports/1/rate")
		if err != nil {
			continue
		}
		gbps, ok := parseRate(string(rateText))
		if !ok {
			continue
		}
		nic := nicInfo{dev: e.Name(), GBps: gbps}
		if target, err := fs.ReadLink(sys, dir+"/device"); err == nil {
			nic.bus = path.Base(target)
			nic.path = h.pciPath(sys, nic.bus)
			nic.pcieGBps = pcieFromSysfs(sys, h.deviceDir(sys, nic.bus))
		}
		out = append(out, nic)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dev < out[j].dev })
	return out
}

// parseRate reads a port rate such as "400 Gb/sec (4X NDR)" as GB/s.
func parseRate(s string) (float64, bool) {
	f := strings.Fields(s)
	if len(f) < 2 || !strings.HasPrefix(f[1], "Gb/s") {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || !(v > 0) || v > 1e6 {
		return 0, false
	}
	return v / 8, true
}

// pcieFromSysfs reads a device's max_link_speed ("16.0 GT/s PCIe") and
// max_link_width and returns PCIeEffectiveGBps, 0 when unreadable.
func pcieFromSysfs(sys fs.FS, dir string) float64 {
	speed, err := fs.ReadFile(sys, dir+"/max_link_speed")
	if err != nil {
		return 0
	}
	width, err := readInt(sys, dir+"/max_link_width")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(speed))
	if len(f) == 0 {
		return 0
	}
	gts, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	gen := map[float64]int{2.5: 1, 5: 2, 8: 3, 16: 4, 32: 5, 64: 6}[gts]
	return topo.PCIeEffectiveGBps(gen, width)
}
