package model

import (
	"testing"

	"github.com/goring-hpc/goring/topo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mkNode builds a node by hand: GPUs with their sockets, and links.
func mkNode(sockets []int, links ...topo.Link) *topo.Node {
	n := &topo.Node{Name: "hand", Sockets: 1}
	for i, s := range sockets {
		n.GPUs = append(n.GPUs, topo.GPU{Index: i, Socket: s, NUMA: s, Rail: -1})
		if s+1 > n.Sockets {
			n.Sockets = s + 1
		}
	}
	n.Links = links
	return n
}

func link(kind topo.LinkKind, a, b string, count int, alpha, beta float64) topo.Link {
	return topo.Link{Kind: kind, A: a, B: b, Count: count, AlphaUS: alpha, BetaGBps: beta, FullDuplex: true}
}

func names(ps []Path) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// Multi-path model, Figure 2(b): four GPUs, NVLink full mesh (2 links per
// pair, as on Beluga), every GPU on PCIe to one socket. From GPU 0 to GPU
// 1: direct, through GPU 2, through GPU 3, through host memory, with each
// hop's figures taken from its links.
func TestEnumerateFullMeshFourPaths(t *testing.T) {
	var links []topo.Link
	for a := 0; a < 4; a++ {
		for b := a + 1; b < 4; b++ {
			links = append(links, link(topo.NVLink, topo.GPUEndpoint(a), topo.GPUEndpoint(b), 2, 1.5, 25))
		}
		links = append(links, link(topo.PCIe, topo.GPUEndpoint(a), topo.HostEndpoint(0), 1, 2, 12))
	}
	o := DefaultOptions()
	ps, err := EnumeratePaths(mkNode([]int{0, 0, 0, 0}, links...), 0, 1, o)
	require.NoError(t, err)
	require.Equal(t, []string{"direct", "gpu:2", "gpu:3", "host"}, names(ps))
	assert.Equal(t, Path{Name: "direct", Alpha1US: 1.5, Beta1GBps: 50}, ps[0])
	assert.Equal(t, Path{Name: "gpu:2", Alpha1US: 1.5, Beta1GBps: 50, Alpha2US: 1.5, Beta2GBps: 50,
		EpsilonUS: o.GPUStageEpsilonUS, Staged: true}, ps[1])
	assert.Equal(t, Path{Name: "host", Alpha1US: 2, Beta1GBps: 12, Alpha2US: 2, Beta2GBps: 12,
		EpsilonUS: o.HostStageEpsilonUS, Staged: true}, ps[3])
}

// Two sockets, NVLink only within a socket's pair (clusterA's shape):
//   - 0->1: direct NVLink and host memory of socket 0; GPU-staged paths
//     through 2 or 3 would cross the root complexes, so they are left out;
//   - 0->2: the direct route is PCIe-UPI-PCIe peer to peer; a host-staged
//     path would use the same PCIe link out of GPU 0, so only direct stays.
func TestEnumerateTwoSocketsSkipsHostCrossingAndSharedLinks(t *testing.T) {
	n := mkNode([]int{0, 0, 1, 1},
		link(topo.NVLink, "gpu:0", "gpu:1", 4, 1.5, 25),
		link(topo.NVLink, "gpu:2", "gpu:3", 4, 1.5, 25),
		link(topo.PCIe, "gpu:0", "host:0", 1, 2, 25),
		link(topo.PCIe, "gpu:1", "host:0", 1, 2, 25),
		link(topo.PCIe, "gpu:2", "host:1", 1, 2, 25),
		link(topo.PCIe, "gpu:3", "host:1", 1, 2, 25),
		link(topo.UPI, "host:0", "host:1", 3, 1, 20),
	)
	ps, err := EnumeratePaths(n, 0, 1, DefaultOptions())
	require.NoError(t, err)
	assert.Equal(t, []string{"direct", "host"}, names(ps))
	ps, err = EnumeratePaths(n, 0, 2, DefaultOptions())
	require.NoError(t, err)
	require.Equal(t, []string{"direct"}, names(ps))
	// PCIe (2 us, 25) + UPI (1 us, 3x20) + PCIe (2 us, 25).
	assert.Equal(t, Path{Name: "direct", Alpha1US: 5, Beta1GBps: 25}, ps[0])
}

// GPUs on different sockets joined by NVLink: the host path stages in one
// socket's memory and one of its hops crosses the socket link, whose
// startup adds to that hop and whose bandwidth can be the bottleneck.
func TestEnumerateCrossSocketHostPathCrossesSocketLink(t *testing.T) {
	n := mkNode([]int{0, 1},
		link(topo.NVLink, "gpu:0", "gpu:1", 18, 1.5, 26.56),
		link(topo.PCIe, "gpu:0", "host:0", 1, 2, 50),
		link(topo.PCIe, "gpu:1", "host:1", 1, 2, 50),
		link(topo.UPI, "host:0", "host:1", 1, 1, 30),
	)
	ps, err := EnumeratePaths(n, 0, 1, DefaultOptions())
	require.NoError(t, err)
	require.Equal(t, []string{"direct", "host"}, names(ps))
	h := ps[1]
	// Both sockets give min(50, 30, 50) = 30 GB/s and 5 us in total; the tie
	// goes to src's socket: gpu:0 -> host:0, then host:0 -> host:1 -> gpu:1.
	assert.Equal(t, 2.0, h.Alpha1US)
	assert.Equal(t, 50.0, h.Beta1GBps)
	assert.Equal(t, 3.0, h.Alpha2US)
	assert.Equal(t, 30.0, h.Beta2GBps)

}

// An NVSwitch node: every GPU-staged path would leave GPU 0 over the same
// switch port as the direct route, so none is listed (the model counts
// each path's bandwidth as its own).
func TestEnumerateNVSwitchHasNoGPUStagedPaths(t *testing.T) {
	var links []topo.Link
	for g := 0; g < 4; g++ {
		links = append(links,
			link(topo.NVSwitch, topo.GPUEndpoint(g), "switch:0", 18, 1, 25),
			link(topo.PCIe, topo.GPUEndpoint(g), "host:0", 1, 2, 50))
	}
	ps, err := EnumeratePaths(mkNode([]int{0, 0, 0, 0}, links...), 1, 3, DefaultOptions())
	require.NoError(t, err)
	assert.Equal(t, []string{"direct", "host"}, names(ps))
	assert.Equal(t, 2.0, ps[0].Alpha1US)
	assert.Equal(t, 450.0, ps[0].Beta1GBps)
}

// A half-duplex link carries one direction at a time. Two GPUs behind one
// PCIe switch with a single uplink to the host: the host-staged path goes up
// the uplink on its first hop and down it on its second, which a full-duplex
// uplink allows and a half-duplex one does not.
func TestEnumerateHalfDuplexUplink(t *testing.T) {
	n := mkNode([]int{0, 0},
		link(topo.NVLink, "gpu:0", "gpu:1", 4, 1, 25),
		link(topo.PCIe, "gpu:0", "switch:0", 1, 1, 25),
		link(topo.PCIe, "gpu:1", "switch:0", 1, 1, 25),
		link(topo.PCIe, "switch:0", "host:0", 1, 1, 25),
	)
	ps, err := EnumeratePaths(n, 0, 1, DefaultOptions())
	require.NoError(t, err)
	assert.Equal(t, []string{"direct", "host"}, names(ps))
	n.Links[3].FullDuplex = false
	ps, err = EnumeratePaths(n, 0, 1, DefaultOptions())
	require.NoError(t, err)
	assert.Equal(t, []string{"direct"}, names(ps))
}

func TestEnumerateErrors(t *testing.T) {
	n := mkNode([]int{0, 0}, link(topo.NVLink, "gpu:0", "gpu:1", 1, 1, 50))
	cases := []struct{ src, dst int }{{0, 0}, {-1, 1}, {0, 2}, {5, 0}}
	for i, c := range cases {
		_, err := EnumeratePaths(n, c.src, c.dst, DefaultOptions())
		assert.Error(t, err, "case %d", i)
	}
}

// Every pair of every preset: the Splitter builds, the direct path comes
// first when there is one, names are unique, figures are usable.
func TestEnumerateEveryPreset(t *testing.T) {
	for _, name := range topo.PresetNames() {
		tp, err := topo.Preset(name)
		require.NoError(t, err)
		node := &tp.Nodes[0]
		sp, err := NewSplitter(node, DefaultOptions())
		require.NoError(t, err, name)
		for src := range node.GPUs {
			for dst := range node.GPUs {
				if src == dst {
					continue
				}
				ps, err := sp.Paths(src, dst)
				require.NoError(t, err)
				require.NotEmpty(t, ps, "%s %d->%d", name, src, dst)
				assert.Equal(t, DirectName, ps[0].Name, "%s %d->%d", name, src, dst)
				seen := map[string]bool{}
				for _, p := range ps {
					assert.False(t, seen[p.Name], "%s %d->%d duplicate %s", name, src, dst, p.Name)
					seen[p.Name] = true
					assert.True(t, p.valid(), "%s %d->%d %+v", name, src, dst, p)
				}
			}
		}
	}
}
