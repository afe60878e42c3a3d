package topo

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The presets docs/contracts.md promises, with the facts the papers and docs/gpu.md
// state about each (checked below against what the preset builds).
var presetFacts = []struct {
	name        string
	gpus        int
	sockets     int
	rails       int
	railGBps    float64 // NIC line rate / 8
	pairLinks   map[[2]int]int
	nvlinkGBps  float64 // one link, one direction
	directPairs int     // GPU pairs with a direct link
}{
	/*0*/ {name: "h200x2", gpus: 2, sockets: 1, pairLinks: map[[2]int]int{{0, 1}: 18}, nvlinkGBps: 26.56, directPairs: 1},
	/*1*/ {name: "clusterA", gpus: 4, sockets: 2, rails: 4, railGBps: 12.5, pairLinks: map[[2]int]int{{0, 1}: 4, {2, 3}: 4}, nvlinkGBps: 25, directPairs: 2},
	/*2*/ {name: "clusterB", gpus: 4, sockets: 1, rails: 4, railGBps: 25, pairLinks: map[[2]int]int{{0, 3}: 6, {1, 2}: 6}, nvlinkGBps: 25, directPairs: 6},
	/*3*/ {name: "beluga", gpus: 4, sockets: 2, rails: 1, railGBps: 12.5, pairLinks: map[[2]int]int{{0, 1}: 2, {2, 3}: 2}, nvlinkGBps: 25, directPairs: 6},
	/*4*/ {name: "narval", gpus: 4, sockets: 2, rails: 1, railGBps: 25, pairLinks: map[[2]int]int{{0, 2}: 4}, nvlinkGBps: 25, directPairs: 6},
	/*5*/ {name: "dgx-h100", gpus: 8, sockets: 2, rails: 8, railGBps: 50, directPairs: 0},
	/*6*/ {name: "ascend-8p", gpus: 8, sockets: 4, rails: 8, railGBps: 25, pairLinks: map[[2]int]int{{0, 7}: 1, {3, 4}: 1}, nvlinkGBps: 56, directPairs: 28},
	/*7*/ {name: "h100x2", gpus: 2, sockets: 1, pairLinks: map[[2]int]int{{0, 1}: 18}, nvlinkGBps: 26.56, directPairs: 1},
	// Four processes on one H100: four "GPUs" that reach each other only
	// through the GPU's memory (the hub of their PCIe-kind links).
	/*8*/ {name: "h100-shared4", gpus: 4, sockets: 1, directPairs: 0},
}

func TestPresetsMatchTheirSources(t *testing.T) {
	require.Len(t, PresetNames(), len(presetFacts), "a preset without facts to check, or facts without a preset")
	for i, f := range presetFacts {
		tp, err := Preset(f.name)
		require.NoError(t, err, "case %d", i)
		require.NoError(t, tp.Validate(), "case %d %s", i, f.name)
		assert.Equal(t, f.name, tp.Name, "case %d", i)
		require.Len(t, tp.Nodes, 1, "case %d", i)
		n := &tp.Nodes[0]
		assert.Len(t, n.GPUs, f.gpus, "case %d", i)
		assert.Equal(t, f.sockets, n.Sockets, "case %d", i)
		assert.Len(t, tp.Rails, f.rails, "case %d", i)
		assert.Len(t, n.NICs, f.rails, "case %d", i)
		for _, r := range tp.Rails {
			assert.Equal(t, f.railGBps, r.BetaGBps, "case %d rail %d", i, r.Index)
		}
		for pair, count := range f.pairLinks {
			ls := n.DirectLinks(GPUEndpoint(pair[0]), GPUEndpoint(pair[1]))
			require.Len(t, ls, 1, "case %d pair %v", i, pair)
			assert.Equal(t, count, n.Links[ls[0]].Count, "case %d pair %v", i, pair)
			assert.Equal(t, f.nvlinkGBps, n.Links[ls[0]].BetaGBps, "case %d pair %v", i, pair)
		}
		direct := 0
		for a := range n.GPUs {
			for b := a + 1; b < len(n.GPUs); b++ {
				if len(n.DirectLinks(GPUEndpoint(a), GPUEndpoint(b))) > 0 {
					direct++
				}
			}
		}
		assert.Equal(t, f.directPairs, direct, "case %d", i)
		for _, g := range n.GPUs {
			// Every GPU has its PCIe link to its socket's host (the Multi-path model paper's
			// host-staged path).
			ls := n.DirectLinks(GPUEndpoint(g.Index), HostEndpoint(g.Socket))
			require.Len(t, ls, 1, "case %d gpu %d", i, g.Index)
			assert.Equal(t, PCIe, n.Links[ls[0]].Kind, "case %d gpu %d", i, g.Index)
			// ... and reaches every other GPU and its own rail.
			for _, h := range n.GPUs {
				hops, err := n.Route(GPUEndpoint(g.Index), GPUEndpoint(h.Index))
				require.NoError(t, err, "case %d", i)
				assertConnected(t, n, GPUEndpoint(g.Index), GPUEndpoint(h.Index), hops, i)
			}
			if g.Rail >= 0 {
				hops, err := n.Route(GPUEndpoint(g.Index), RailEndpoint(g.Rail))
				require.NoError(t, err, "case %d", i)
				_, bw := n.PathCost(hops)
				// The port bounds the route; a slot slower than the port
				// (beluga: EDR 12.5 GB/s in PCIe Gen3, 12 effective) may
				// shave a little off.
				assert.LessOrEqual(t, bw, f.railGBps, "case %d gpu %d", i, g.Index)
				assert.GreaterOrEqual(t, bw, 0.95*f.railGBps, "case %d gpu %d", i, g.Index)
			}
		}
		for li, l := range n.Links {
			assert.Greater(t, l.AlphaUS+1, 0.0, "case %d link %d", i, li)
			assert.True(t, l.FullDuplex, "case %d link %d", i, li)
		}
	}
}

func TestPresetRoutesFollowTheHardware(t *testing.T) {
	tests := []struct {
		preset, from, to string
		kinds            []LinkKind
		alphaUS, GBps    float64
	}{
		// Parallel Rings Fig. 2b: cross-socket GPUs talk over PCIe, UPI, PCIe.
		/*0*/ {"clusterA", "gpu:1", "gpu:2", []LinkKind{PCIe, UPI, PCIe}, 2*pcieAlphaUS + upiAlphaUS, 25},
		/*1*/ {"clusterA", "gpu:2", "gpu:3", []LinkKind{NVLink}, nvlinkAlphaUS, 100},
		// Rail-dedicated NICs on the host in cluster A.
		/*2*/ {"clusterA", "gpu:3", "rail:3", []LinkKind{PCIe, PCIe, NIC}, 2*pcieAlphaUS + nicAlphaUS, 12.5},
		// GPUDirect RDMA through the shared PCIe switch in cluster B.
		/*3*/ {"clusterB", "gpu:2", "rail:2", []LinkKind{PCIe, NIC}, pcieAlphaUS + nicAlphaUS, 25},
		/*4*/ {"clusterB", "gpu:0", "gpu:3", []LinkKind{NVLink}, nvlinkAlphaUS, 150},
		// DGX H100: GPU to GPU through the NVSwitch plane at 18 x 25 GB/s.
		/*5*/ {"dgx-h100", "gpu:0", "gpu:7", []LinkKind{NVSwitch, NVSwitch}, nvlinkAlphaUS, 450},
		/*6*/ {"dgx-h100", "rail:5", "gpu:5", []LinkKind{NIC, PCIe}, nicAlphaUS + pcieAlphaUS, 50},
		// h200x2: NV18 at the measured 26.56 GB/s per link (docs/gpu.md "Reference figures").
		/*7*/ {"h200x2", "gpu:1", "gpu:0", []LinkKind{NVLink}, nvlinkAlphaUS, 18 * 26.56},
		/*8*/ {"h200x2", "gpu:1", "host:0", []LinkKind{PCIe}, pcieAlphaUS, 50},
		// Ascend: the RoCE port is on the NPU.
		/*9*/ {"ascend-8p", "gpu:6", "rail:6", []LinkKind{PCIe, NIC}, roceNICAlphaUS, 25},
		/*10*/ {"ascend-8p", "gpu:0", "gpu:5", []LinkKind{NVLink}, nvlinkAlphaUS, 56},
		// Beluga: the GPUs' host is socket 0, where the NIC is too.
		/*11*/ {"beluga", "gpu:3", "rail:0", []LinkKind{PCIe, PCIe, NIC}, 2*pcieAlphaUS + nicAlphaUS, 12},
		// Narval: GPU 2 (socket 1) to the NIC on socket 0 crosses xGMI.
		/*12*/ {"narval", "gpu:2", "rail:0", []LinkKind{PCIe, UPI, PCIe, NIC}, 2*pcieAlphaUS + upiAlphaUS + nicAlphaUS, 25},
	}
	for i, tt := range tests {
		tp, err := Preset(tt.preset)
		require.NoError(t, err, "case %d", i)
		n := &tp.Nodes[0]
		hops, err := n.Route(tt.from, tt.to)
		require.NoError(t, err, "case %d", i)
		var kinds []LinkKind
		for _, h := range hops {
			kinds = append(kinds, n.Links[h.Link].Kind)
		}
		assert.Equal(t, tt.kinds, kinds, "case %d %s %s->%s", i, tt.preset, tt.from, tt.to)
		a, b := n.PathCost(hops)
		assert.InDelta(t, tt.alphaUS, a, 1e-9, "case %d", i)
		assert.InDelta(t, tt.GBps, b, 1e-9, "case %d", i)
	}
}

func TestPresetRailRouteAcrossNodes(t *testing.T) {
	for i, name := range PresetNames() {
		tp, err := Preset(name)
		require.NoError(t, err)
		tp, err = tp.Repeat(3)
		require.NoError(t, err, "case %d", i)
		for _, r := range tp.Rails {
			for g := range tp.Nodes[0].GPUs {
				src, dst, err := tp.RailRoute(0, g, 2, g, r.Index)
				if name == "ascend-8p" && g != r.Index {
					// The RoCE port is on NPU r: other NPUs reach it
					// only by relaying through NPU r, which is a staged
					// path of two routes, not one route.
					require.Error(t, err, "case %d gpu %d rail %d", i, g, r.Index)
					continue
				}
				require.NoError(t, err, "case %d %s gpu %d rail %d", i, name, g, r.Index)
				assertConnected(t, &tp.Nodes[0], GPUEndpoint(g), RailEndpoint(r.Index), src, i)
				assertConnected(t, &tp.Nodes[2], RailEndpoint(r.Index), GPUEndpoint(g), dst, i)
				a, b := tp.RailPathCost(0, src, 2, dst, r.Index)
				assert.LessOrEqual(t, b, r.BetaGBps, "case %d", i)
				assert.Greater(t, a, r.AlphaUS, "case %d", i)
			}
		}
	}
}

func TestPresetIsAFreshCopy(t *testing.T) {
	for i, name := range PresetNames() {
		a, _ := Preset(name)
		a.Nodes[0].Links[0].Count = 999
		a.Nodes[0].GPUs[0].Model = "changed"
		b, _ := Preset(name)
		assert.NotEqual(t, 999, b.Nodes[0].Links[0].Count, "case %d", i)
		assert.NotEqual(t, "changed", b.Nodes[0].GPUs[0].Model, "case %d", i)
	}
	_, err := Preset("nope")
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("unknown topology preset %q", "nope"))
}

func TestPCIeEffectiveGBps(t *testing.T) {
	tests := []struct {
		gen, width int
		want       float64
	}{
		// 80% of 15.75, 31.5, 63 GB/s: the presets' 12, 25, 50 within 6%.
		/*0*/ {3, 16, 0.8 * 15.754}, {4, 16, 0.8 * 31.508}, {5, 16, 0.8 * 63.015},
		/*3*/ {4, 8, 0.8 * 15.754}, {1, 16, 3.2}, {2, 4, 1.6}, {6, 16, 0.8 * 7.56 * 16},
		/*7*/ {7, 16, 0}, {0, 16, 0}, {4, 0, 0},
	}
	for i, tt := range tests {
		assert.InDelta(t, tt.want, PCIeEffectiveGBps(tt.gen, tt.width), 0.01, "case %d", i)
	}
	assert.InEpsilon(t, pcieGen3GBps, PCIeEffectiveGBps(3, 16), 0.06)
	assert.InEpsilon(t, pcieGen4GBps, PCIeEffectiveGBps(4, 16), 0.05)
	assert.InEpsilon(t, pcieGen5GBps, PCIeEffectiveGBps(5, 16), 0.05)
	assert.Equal(t, nvlinkAlphaUS, DefaultAlphaUS(NVLink))
	assert.Equal(t, 2*DefaultAlphaUS(NVSwitch), DefaultAlphaUS(NVLink), "gpu-switch-gpu costs one peer copy")
	assert.Equal(t, 0.0, DefaultAlphaUS("bogus"))
}
