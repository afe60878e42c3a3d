package detect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/topo"
)

// fakeDevice answers like an NVML device handle.
type fakeDevice struct {
	name, uuid, bus string
	gen, width      int
	links           map[int]fakeLink // by link number; absent: invalid link
	noNVLink        bool
}

type fakeLink struct {
	up      bool
	remote  string
	version uint32
	kind    nvml.IntNvLinkDeviceType // NVLINK_DEVICE_TYPE_UNKNOWN: call fails
}

func pciInfo(bus string) nvml.PciInfo {
	var p nvml.PciInfo
	for i := 0; i < len(bus) && i < len(p.BusId)-1; i++ {
		p.BusId[i] = int8(bus[i])
	}
	return p
}

func (d *fakeDevice) GetName() (string, nvml.Return)          { return d.name, nvml.SUCCESS }
func (d *fakeDevice) GetUUID() (string, nvml.Return)          { return d.uuid, nvml.SUCCESS }
func (d *fakeDevice) GetPciInfo() (nvml.PciInfo, nvml.Return) { return pciInfo(d.bus), nvml.SUCCESS }
func (d *fakeDevice) GetMaxPcieLinkGeneration() (int, nvml.Return) {
	if d.gen == 0 {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	return d.gen, nvml.SUCCESS
}
func (d *fakeDevice) GetMaxPcieLinkWidth() (int, nvml.Return) { return d.width, nvml.SUCCESS }
func (d *fakeDevice) GetNvLinkState(l int) (nvml.EnableState, nvml.Return) {
	if d.noNVLink {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	fl, ok := d.links[l]
	if !ok {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	if fl.up {
		return nvml.FEATURE_ENABLED, nvml.SUCCESS
	}
	return nvml.FEATURE_DISABLED, nvml.SUCCESS
}
func (d *fakeDevice) GetNvLinkRemotePciInfo(l int) (nvml.PciInfo, nvml.Return) {
	return pciInfo(d.links[l].remote), nvml.SUCCESS
}
func (d *fakeDevice) GetNvLinkVersion(l int) (uint32, nvml.Return) {
	return d.links[l].version, nvml.SUCCESS
}
func (d *fakeDevice) GetNvLinkRemoteDeviceType(l int) (nvml.IntNvLinkDeviceType, nvml.Return) {
	if k := d.links[l].kind; k != nvml.NVLINK_DEVICE_TYPE_UNKNOWN {
		return k, nvml.SUCCESS
	}
	return 0, nvml.ERROR_NOT_SUPPORTED
}

type fakeLib struct {
	initRet  nvml.Return
	devs     []*fakeDevice
	shutdown int
	p2p      map[[2]int]bool
}

func (f *fakeLib) Init() nvml.Return                  { return f.initRet }
func (f *fakeLib) Shutdown() nvml.Return              { f.shutdown++; return nvml.SUCCESS }
func (f *fakeLib) DeviceGetCount() (int, nvml.Return) { return len(f.devs), nvml.SUCCESS }
func (f *fakeLib) device(i int) (device, nvml.Return) { return f.devs[i], nvml.SUCCESS }
func (f *fakeLib) nvlinkP2P(i, j int) (bool, nvml.Return) {
	return f.p2p[[2]int{i, j}] || f.p2p[[2]int{j, i}], nvml.SUCCESS
}

func TestReadGPUsNoDriver(t *testing.T) {
	tests := []struct {
		ret  nvml.Return
		want string
	}{
		/*0*/ {nvml.ERROR_LIBRARY_NOT_FOUND, "no NVIDIA driver found (nvml init: libnvidia-ml.so.1 not found)"},
		/*1*/ {nvml.ERROR_DRIVER_NOT_LOADED, "no NVIDIA driver found (nvml init: NVIDIA driver not loaded)"},
		/*2*/ {nvml.ERROR_UNKNOWN, "no NVIDIA driver found (nvml init: NVML error 999)"},
	}
	for i, tt := range tests {
		lib := &fakeLib{initRet: tt.ret}
		_, err := readGPUs(lib)
		require.Error(t, err, "case %d", i)
		assert.True(t, IsNoDriver(err), "case %d", i)
		assert.Equal(t, tt.want, err.Error(), "case %d", i)
		assert.Equal(t, 0, lib.shutdown, "case %d: no Shutdown after a failed Init", i)
	}
	assert.False(t, IsNoDriver(errors.New("other")))
}

func TestReadGPUsCountsActiveLinks(t *testing.T) {
	a := &fakeDevice{name: "NVIDIA H200", uuid: "GPU-a", bus: "00000000:18:00.0", gen: 5, width: 16, links: map[int]fakeLink{}}
	b := &fakeDevice{name: "NVIDIA H200", uuid: "GPU-b", bus: "00000000:2A:00.0", gen: 5, width: 16, links: map[int]fakeLink{}}
	for l := 0; l < 18; l++ {
		a.links[l] = fakeLink{up: l != 3, remote: b.bus, version: 6, kind: nvml.NVLINK_DEVICE_TYPE_GPU}
		b.links[l] = fakeLink{up: l != 3, remote: a.bus, version: 6, kind: nvml.NVLINK_DEVICE_TYPE_UNKNOWN}
	}
	lib := &fakeLib{devs: []*fakeDevice{a, b}, p2p: map[[2]int]bool{{0, 1}: true}}
	gpus, err := readGPUs(lib)
	require.NoError(t, err)
	require.Len(t, gpus, 2)
	assert.Equal(t, 1, lib.shutdown)
	assert.Equal(t, "GPU-b", gpus[1].UUID)
	assert.Equal(t, "00000000:2A:00.0", gpus[1].PCIBusID)
	assert.Equal(t, 5, gpus[0].PCIeGen)
	require.Len(t, gpus[0].NVLinks, 17, "link 3 is down")
	for _, l := range gpus[0].NVLinks {
		assert.NotEqual(t, 3, l.Link)
		assert.Equal(t, b.bus, l.RemoteBusID)
		assert.Equal(t, uint32(6), l.Version)
		assert.Equal(t, RemoteGPU, l.RemoteType)
	}
	assert.Equal(t, "", gpus[1].NVLinks[0].RemoteType, "type call unsupported")
	assert.Equal(t, []int{1}, gpus[0].NVLinkPeers)
	assert.Equal(t, []int{0}, gpus[1].NVLinkPeers)

	// Built into a topology: one NV17 bundle at NVLink 4's 25 GB/s.
	tp, err := Build("detected", "box", gpus, fstest.MapFS{})
	require.NoError(t, err)
	n := tp.Nodes[0]
	ls := n.DirectLinks("gpu:0", "gpu:1")
	require.Len(t, ls, 1)
	assert.Equal(t, 17, n.Links[ls[0]].Count)
	assert.Equal(t, 25.0, n.Links[ls[0]].BetaGBps)
	assert.Equal(t, "0000:2a:00.0", n.GPUs[1].PCIBusID)

	// A GPU without NVLink at all.
	c := &fakeDevice{name: "Tesla T4", uuid: "GPU-c", bus: "0000:3b:00.0", noNVLink: true}
	gpus, err = readGPUs(&fakeLib{devs: []*fakeDevice{c}})
	require.NoError(t, err)
	assert.Empty(t, gpus[0].NVLinks)
	assert.Nil(t, gpus[0].NVLinkPeers, "no NVLink: peers not asked")
	assert.Equal(t, 0, gpus[0].PCIeGen)
}

// sysfs builds a fake /sys.
type sysfs fstest.MapFS

func (s sysfs) cpus(pkg int, first, count int) {
	for c := first; c < first+count; c++ {
		s[fmt.Sprintf("devices/system/cpu/cpu%d/topology/physical_package_id", c)] = &fstest.MapFile{Data: []byte(fmt.Sprintf("%d\n", pkg))}
	}
}

func (s sysfs) numa(node int, cpulist string) {
	s[fmt.Sprintf("devices/system/node/node%d/cpulist", node)] = &fstest.MapFile{Data: []byte(cpulist + "\n")}
}

// pci adds a device at devpath (under devices/) with its bus symlink.
func (s sysfs) pci(devpath string, numa int, speed string, width int) string {
	bus := devpath[len(devpath)-12:]
	s["bus/pci/devices/"+bus] = &fstest.MapFile{Data: []byte("../../../devices/" + devpath), Mode: fs.ModeSymlink}
	s["devices/"+devpath+"/numa_node"] = &fstest.MapFile{Data: []byte(fmt.Sprintf("%d\n", numa))}
	s["devices/"+devpath+"/max_link_speed"] = &fstest.MapFile{Data: []byte(speed + "\n")}
	s["devices/"+devpath+"/max_link_width"] = &fstest.MapFile{Data: []byte(fmt.Sprintf("%d\n", width))}
	return bus
}

func (s sysfs) ib(dev, bus, rate, state string) {
	s["class/infiniband/"+dev+"/device"] = &fstest.MapFile{Data: []byte("../../../" + bus), Mode: fs.ModeSymlink}
	s["class/infiniband/"+dev+"/ports/1/rate"] = &fstest.MapFile{Data: []byte(rate + "\n")}
	s["class/infiniband/"+dev+"/ports/1/state"] = &fstest.MapFile{Data: []byte(state + "\n")}
}

// TestBuildClusterALike imitates cluster A (Parallel Rings IV-A): two sockets of
// two A30 each, NV4 pairs 0-1 and 2-3, four 100 Gb/s HCAs two per socket on
// their own root ports. The result must have the clusterA preset's shape.
func TestBuildClusterALike(t *testing.T) {
	s := sysfs{}
	s.cpus(0, 0, 4)
	s.cpus(1, 4, 4)
	s.numa(0, "0-3")
	s.numa(1, "4-7")
	var gpus []GPUInfo
	var gpuBus []string
	for i := 0; i < 4; i++ {
		sock := i / 2
		bus := s.pci(fmt.Sprintf("pci0000:%d0/0000:%d0:0%d.0/0000:%d%d:00.0", sock+1, sock+1, i, sock+1, i+1), sock, "16.0 GT/s PCIe", 16)
		gpuBus = append(gpuBus, bus)
		gpus = append(gpus, GPUInfo{Name: "NVIDIA A30", UUID: fmt.Sprint("GPU-", i), PCIBusID: "0000" + bus, PCIeGen: 4, PCIeWidth: 16})
	}
	for i := range gpus {
		peer := i ^ 1
		for l := 0; l < 4; l++ {
			gpus[i].NVLinks = append(gpus[i].NVLinks, NVLinkInfo{Link: l, RemoteBusID: gpuBus[peer], Version: 4})
		}
	}
	for r := 0; r < 4; r++ {
		sock := r / 2
		bus := s.pci(fmt.Sprintf("pci0000:%d0/0000:%d0:1%d.0/0000:%d%d:00.0", sock+1, sock+1, r, sock+5, r), sock, "16.0 GT/s PCIe", 16)
		s.ib(fmt.Sprintf("mlx5_%d", r), bus, "100 Gb/sec (4X EDR)", "4: ACTIVE")
	}
	s.ib("mlx5_9", "0000:99:00.0", "100 Gb/sec (4X EDR)", "1: DOWN") // down: ignored

	tp, err := Build("detected", "a1", gpus, fstest.MapFS(s))
	require.NoError(t, err)
	want, err := topo.Preset("clusterA")
	require.NoError(t, err)
	got, exp := tp.Nodes[0], want.Nodes[0]
	assert.Equal(t, "a1", got.Name)
	assert.Equal(t, exp.Sockets, got.Sockets)
	assert.Equal(t, 2, got.NUMANodes)
	require.Len(t, got.GPUs, 4)
	for i := range got.GPUs {
		assert.Equal(t, exp.GPUs[i].Socket, got.GPUs[i].Socket, "gpu %d socket", i)
		assert.Equal(t, exp.GPUs[i].NUMA, got.GPUs[i].NUMA, "gpu %d numa", i)
		assert.Equal(t, exp.GPUs[i].Rail, got.GPUs[i].Rail, "gpu %d rail (same NUMA node)", i)
		assert.Equal(t, gpuBus[i], got.GPUs[i].PCIBusID)
	}
	require.Len(t, tp.Rails, 4)
	for r, rl := range tp.Rails {
		assert.Equal(t, want.Rails[r].BetaGBps, rl.BetaGBps)
		assert.Equal(t, exp.NICs[r], got.NICs[r])
	}
	// Same links by kind and ends (figures may differ: PCIe is computed).
	type key struct {
		kind topo.LinkKind
		a, b string
	}
	keys := func(n topo.Node) map[key]int {
		m := map[key]int{}
		for _, l := range n.Links {
			if l.Kind == topo.UPI {
				l.Count = 1 // discovery cannot count UPI links
			}
			m[key{l.Kind, l.A, l.B}] = l.Count
		}
		return m
	}
	assert.Equal(t, keys(exp), keys(got))
	for _, l := range got.Links {
		if l.Kind == topo.PCIe {
			assert.InDelta(t, 25.2, l.BetaGBps, 0.05, "Gen4 x16 effective")
		}
	}
	// Routing behaves as on the preset: GPU 1 to GPU 2 crosses the sockets.
	hops, err := got.Route("gpu:1", "gpu:2")
	require.NoError(t, err)
	assert.Len(t, hops, 3)
}

// TestBuildDGXLike imitates a DGX H100: eight GPUs whose NVLinks all end at
// NVSwitch chips, NIC i behind GPU i's PCIe switch, two sockets. Hopper's
// driver reports NVLink code 7 here (the known quirk): still 25 GB/s.
func TestBuildDGXLike(t *testing.T) {
	s := sysfs{}
	s.cpus(0, 0, 2)
	s.cpus(1, 2, 2)
	s.numa(0, "0-1")
	s.numa(1, "2-3")
	var gpus []GPUInfo
	for i := 0; i < 8; i++ {
		sock := i / 4
		sw := fmt.Sprintf("pci0000:%d0/0000:%d0:0%d.0/0000:%d%d:00.0/0000:%d%d:00.0", sock+1, sock+1, i, sock+2, i, sock+3, i)
		bus := s.pci(sw+fmt.Sprintf("/0000:%d%d:00.0", sock+4, i), sock, "32.0 GT/s PCIe", 16)
		nic := s.pci(sw+fmt.Sprintf("/0000:%d%d:00.1", sock+4, i), sock, "32.0 GT/s PCIe", 16)
		s.ib(fmt.Sprintf("mlx5_%d", i), nic, "400 Gb/sec (4X NDR)", "4: ACTIVE")
		g := GPUInfo{Name: "NVIDIA H100 80GB HBM3", UUID: fmt.Sprint("GPU-", i), PCIBusID: "00000000:" + bus[5:], PCIeGen: 5, PCIeWidth: 16}
		for l := 0; l < 18; l++ {
			g.NVLinks = append(g.NVLinks, NVLinkInfo{Link: l, RemoteBusID: fmt.Sprintf("0000:0%d:00.0", l%4), Version: 7})
		}
		gpus = append(gpus, g)
	}
	tp, err := Build("detected", "dgx", gpus, fstest.MapFS(s))
	require.NoError(t, err)
	want, err := topo.Preset("dgx-h100")
	require.NoError(t, err)
	got, exp := &tp.Nodes[0], &want.Nodes[0]
	for i := range got.GPUs {
		assert.Equal(t, exp.GPUs[i].Socket, got.GPUs[i].Socket)
		assert.Equal(t, exp.GPUs[i].Rail, got.GPUs[i].Rail, "gpu %d: NIC behind its switch", i)
		ls := got.DirectLinks(topo.GPUEndpoint(i), "switch:0")
		require.Len(t, ls, 1)
		assert.Equal(t, 18, got.Links[ls[0]].Count)
		assert.Equal(t, 25.0, got.Links[ls[0]].BetaGBps)
	}
	for i := 0; i < 8; i++ {
		for _, from := range []*topo.Node{got, exp} {
			hops, err := from.Route(topo.GPUEndpoint(i), topo.RailEndpoint(i))
			require.NoError(t, err)
			assert.Len(t, hops, 2, "GPUDirect RDMA through the shared switch")
		}
		assert.Len(t, got.DirectLinks(topo.GPUEndpoint(i), topo.NICEndpoint((i+1)%8)), 0)
		_, bw := got.PathCost(mustRoute(t, got, topo.GPUEndpoint(i), topo.GPUEndpoint((i+3)%8)))
		assert.Equal(t, 450.0, bw)
	}
	assert.Equal(t, 50.0, tp.Rails[0].BetaGBps)
}

// In a virtual machine NVML gives the far end's host-side bus id, which
// matches none of the GPUs' guest-side ids (seen on the lent 2xH200 VM:
// GPUs at 0000:00:06.0 and 0000:00:07.0).
func TestBuildResolvesFarEndsInVMs(t *testing.T) {
	links := func(n int, remote, kind string) []NVLinkInfo {
		var out []NVLinkInfo
		for l := 0; l < n; l++ {
			out = append(out, NVLinkInfo{Link: l, RemoteBusID: remote, Version: 6, RemoteType: kind})
		}
		return out
	}
	pairCount := func(tp *topo.Topology, a, b int) int {
		ls := tp.Nodes[0].DirectLinks(topo.GPUEndpoint(a), topo.GPUEndpoint(b))
		if len(ls) == 0 {
			return 0
		}
		return tp.Nodes[0].Links[ls[0]].Count
	}
	switchCount := func(tp *topo.Topology, a int) int {
		ls := tp.Nodes[0].DirectLinks(topo.GPUEndpoint(a), "switch:0")
		if len(ls) == 0 {
			return 0
		}
		return tp.Nodes[0].Links[ls[0]].Count
	}

	// 0: two GPUs, far ends typed GPU, no peer answers: the only GPU not
	// linking to 0000:2a:00.0 owns it.
	h200 := []GPUInfo{
		{Name: "NVIDIA H200", PCIBusID: "00000000:00:06.0", NVLinks: links(18, "00000000:2A:00.0", RemoteGPU)},
		{Name: "NVIDIA H200", PCIBusID: "00000000:00:07.0", NVLinks: links(18, "00000000:18:00.0", RemoteGPU)},
	}
	tp, err := Build("d", "vm", h200, fstest.MapFS{})
	require.NoError(t, err)
	assert.Equal(t, 18, pairCount(tp, 0, 1), "case 0")
	assert.Equal(t, 0, switchCount(tp, 0), "case 0")

	// 1: four GPUs in NVLink pairs 0-1, 2-3 with host-side far ends: the
	// peer answers say which GPU owns which far end.
	quad := []GPUInfo{
		{PCIBusID: "0000:00:04.0", NVLinks: links(4, "0000:81:00.0", ""), NVLinkPeers: []int{1}},
		{PCIBusID: "0000:00:05.0", NVLinks: links(4, "0000:80:00.0", ""), NVLinkPeers: []int{0}},
		{PCIBusID: "0000:00:06.0", NVLinks: links(4, "0000:c1:00.0", ""), NVLinkPeers: []int{3}},
		{PCIBusID: "0000:00:07.0", NVLinks: links(4, "0000:c0:00.0", ""), NVLinkPeers: []int{2}},
	}
	tp, err = Build("d", "vm", quad, fstest.MapFS{})
	require.NoError(t, err)
	assert.Equal(t, 4, pairCount(tp, 0, 1), "case 1")
	assert.Equal(t, 4, pairCount(tp, 2, 3), "case 1")
	assert.Equal(t, 0, pairCount(tp, 0, 2), "case 1")

	// 2: the same without peer answers is ambiguous (GPU 0's far end could
	// be GPU 1, 2 or 3): the links are left out, the node still routes
	// through the host.
	for i := range quad {
		quad[i].NVLinkPeers = nil
	}
	tp, err = Build("d", "vm", quad, fstest.MapFS{})
	require.NoError(t, err)
	assert.Equal(t, 0, pairCount(tp, 0, 1), "case 2")
	assert.Equal(t, 0, switchCount(tp, 0), "case 2")

	// 3: far ends of unknown type that every GPU reaches are switches.
	sw := []GPUInfo{
		{PCIBusID: "0000:00:04.0", NVLinks: append(links(9, "0000:05:00.0", ""), links(9, "0000:06:00.0", "")...)},
		{PCIBusID: "0000:00:05.0", NVLinks: append(links(9, "0000:05:00.0", ""), links(9, "0000:06:00.0", "")...)},
	}
	tp, err = Build("d", "vm", sw, fstest.MapFS{})
	require.NoError(t, err)
	assert.Equal(t, 18, switchCount(tp, 0), "case 3")
	assert.Equal(t, 18, switchCount(tp, 1), "case 3")
	assert.Equal(t, 0, pairCount(tp, 0, 1), "case 3")

	// 4: one visible GPU whose NVLink peer is hidden (typed GPU): left out,
	// not mistaken for a switch.
	tp, err = Build("d", "vm", []GPUInfo{{PCIBusID: "0000:00:04.0", NVLinks: links(4, "0000:81:00.0", RemoteGPU)}}, fstest.MapFS{})
	require.NoError(t, err)
	assert.Equal(t, 0, switchCount(tp, 0), "case 4")
	assert.Len(t, tp.Nodes[0].Links, 1, "case 4: only the host link")
}

func mustRoute(t *testing.T, n *topo.Node, a, b string) []topo.Hop {
	t.Helper()
	h, err := n.Route(a, b)
	require.NoError(t, err)
	return h
}

func TestBuildErrors(t *testing.T) {
	_, err := Build("d", "n", nil, fstest.MapFS{})
	require.EqualError(t, err, "no GPUs found")
	_, err = Build("d", "n", []GPUInfo{{PCIBusID: "0000:18:00.0"}, {PCIBusID: "00000000:18:00.0"}}, fstest.MapFS{})
	require.EqualError(t, err, "GPUs 0 and 1 report the same PCI bus id 0000:18:00.0")
	// Two GPUs without NVLink on one socket: reachable through the host.
	tp, err := Build("d", "n", []GPUInfo{{PCIBusID: "0000:18:00.0"}, {PCIBusID: "0000:19:00.0"}}, fstest.MapFS{})
	require.NoError(t, err)
	assert.Equal(t, 1, tp.Nodes[0].Sockets)
	assert.Equal(t, topo.NoRail, tp.Nodes[0].GPUs[0].Rail)
	assert.InDelta(t, topo.PCIeEffectiveGBps(4, 16), tp.Nodes[0].Links[0].BetaGBps, 1e-9, "no PCIe info: Gen4 x16")
}

func TestHelpers(t *testing.T) {
	bus := []struct{ in, want string }{
		/*0*/ {"00000000:18:00.0", "0000:18:00.0"},
		/*1*/ {"0000:AB:00.0", "0000:ab:00.0"},
		/*2*/ {"1:2a:00.0", "0001:2a:00.0"},
		/*3*/ {"garbage", "garbage"},
	}
	for i, tt := range bus {
		assert.Equal(t, tt.want, NormalizeBusID(tt.in), "case %d", i)
	}
	nv := []struct {
		v      uint32
		hopper bool
		want   float64
	}{
		/*0*/ {1, false, 20}, {2, false, 25}, {3, false, 25}, {4, false, 25}, {6, false, 25},
		/*5*/ {7, false, 50}, {7, true, 25}, {0, false, 0}, {9, false, 0},
	}
	for i, tt := range nv {
		assert.Equal(t, tt.want, NVLinkGBps(tt.v, tt.hopper), "case %d", i)
	}
	rates := []struct {
		in   string
		want float64
		ok   bool
	}{
		/*0*/ {"400 Gb/sec (4X NDR)", 50, true}, {"100 Gb/sec (4X EDR)", 12.5, true},
		/*2*/ {"200 Gb/sec (2X HDR)\n", 25, true}, {"fast", 0, false}, {"-1 Gb/sec", 0, false}, {"10 Mb/sec", 0, false},
	}
	for i, tt := range rates {
		got, ok := parseRate(tt.in)
		assert.Equal(t, tt.ok, ok, "case %d", i)
		assert.Equal(t, tt.want, got, "case %d", i)
	}
	cpus := []struct {
		in   string
		want int
		ok   bool
	}{{"0-23,48-71", 0, true}, {"24-47", 24, true}, {"5", 5, true}, {"", 0, false}, {"x", 0, false}}
	for i, tt := range cpus {
		got, ok := firstCPU(tt.in)
		assert.Equal(t, tt.ok, ok, "case %d", i)
		assert.Equal(t, tt.want, got, "case %d", i)
	}
	sw := []struct {
		a, b []string
		want bool
	}{
		/*0*/ {[]string{"pci0", "rp", "up", "down", "gpu"}, []string{"pci0", "rp", "up", "down2", "nic"}, true},
		/*1*/ {[]string{"pci0", "rp", "gpu"}, []string{"pci0", "rp2", "nic"}, false},
		/*2*/ {[]string{"pci0", "rp", "up", "gpu"}, []string{"pci0", "rp", "nic"}, false},
		/*3*/ {nil, []string{"pci0", "rp", "nic"}, false},
	}
	for i, tt := range sw {
		assert.Equal(t, tt.want, sharesSwitch(tt.a, tt.b), "case %d", i)
	}
}

// hasDriver says whether libnvidia-ml can be loaded here.
func hasDriver() bool {
	lib := nvml.New()
	if lib.Init() != nvml.SUCCESS {
		return false
	}
	lib.Shutdown()
	return true
}

func TestDetectWithoutDriver(t *testing.T) {
	if hasDriver() {
		t.Skip("an NVIDIA driver is present: TestDetectRealGPU covers this machine")
	}
	_, err := Detect()
	require.Error(t, err)
	assert.True(t, IsNoDriver(err), "%v", err)
	assert.Regexp(t, `^no NVIDIA driver found \(nvml init: .+\)$`, err.Error())
}

func TestDetectRealGPU(t *testing.T) {
	if !hasDriver() {
		t.Skip("no NVIDIA driver on this machine (libnvidia-ml did not initialise)")
	}
	gpus, err := readGPUs(realNVML{lib: nvml.New()})
	require.NoError(t, err)
	for _, g := range gpus {
		t.Logf("NVML: %s %s bus %s PCIe gen %d x%d, %d active NVLinks, NVLink peers %v", g.Name, g.UUID, g.PCIBusID, g.PCIeGen, g.PCIeWidth, len(g.NVLinks), g.NVLinkPeers)
		for _, l := range g.NVLinks {
			t.Logf("  link %d -> %s (%q) version code %d", l.Link, l.RemoteBusID, l.RemoteType, l.Version)
		}
	}
	tp, err := Detect()
	require.NoError(t, err)
	require.NoError(t, tp.Validate())
	b, _ := topo.Marshal(tp)
	t.Logf("detected:\n%s", b)
	n := tp.Nodes[0]
	require.NotEmpty(t, n.GPUs)
	for _, g := range n.GPUs {
		assert.NotEmpty(t, g.UUID)
		assert.NotEmpty(t, g.PCIBusID)
		_, err := os.Stat("/sys/bus/pci/devices/" + g.PCIBusID)
		assert.NoError(t, err, "GPU %d's normalised bus id names its sysfs device", g.Index)
	}
	checkAgainstNvidiaSMI(t, &n)
}

// checkAgainstNvidiaSMI compares the NVLink bundles with the "NV#" cells of
// nvidia-smi topo -m, an independent reading of the same hardware: a pair
// shown NV# has a direct bundle of # links, or both GPUs reach the switch
// plane with at least # links; any other cell means no direct bundle.
func checkAgainstNvidiaSMI(t *testing.T, n *topo.Node) {
	out, err := exec.Command("nvidia-smi", "topo", "-m").Output()
	if err != nil {
		t.Logf("nvidia-smi topo -m unavailable (%v): NVLink counts not cross-checked", err)
		return
	}
	count := func(a, b string) int {
		ls := n.DirectLinks(a, b)
		if len(ls) == 0 {
			return 0
		}
		return n.Links[ls[0]].Count
	}
	rows := 0
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < len(n.GPUs)+1 || !strings.HasPrefix(f[0], "GPU") {
			continue
		}
		i, err := strconv.Atoi(strings.TrimSpace(f[0][3:]))
		if err != nil || i >= len(n.GPUs) {
			continue
		}
		rows++
		for j := range n.GPUs {
			cell := strings.TrimSpace(f[1+j])
			a, b := topo.GPUEndpoint(i), topo.GPUEndpoint(j)
			if k, err := strconv.Atoi(strings.TrimPrefix(cell, "NV")); strings.HasPrefix(cell, "NV") && err == nil {
				viaSwitch := count(a, "switch:0") >= k && count(b, "switch:0") >= k
				assert.True(t, count(a, b) == k || viaSwitch, "GPU %d-%d: nvidia-smi says %s, detected direct %d, switch %d/%d", i, j, cell, count(a, b), count(a, "switch:0"), count(b, "switch:0"))
			} else if i != j {
				assert.Equal(t, 0, count(a, b), "GPU %d-%d: nvidia-smi says %s", i, j, cell)
			}
		}
	}
	assert.Equal(t, len(n.GPUs), rows, "one nvidia-smi row per GPU:\n%s", out)
}
