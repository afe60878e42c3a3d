package topo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The GPU form: two GPUs of a node meet over NVLink, not through the host;
// a rank's rail bytes cross the staging PCIe link and then the CPU's copy
// link, which carries the copy share of the rank that owns the rail.
func TestTestbedGPUTopology(t *testing.T) {
	g := DefaultTestbedGPU()
	tb := Testbed{Nodes: 2, PPN: 4, Rails: 2, RailGBps: 0.125, RailAlphaUS: 30, CopyGBps: 8, CopyAlphaUS: 5, GPU: &g}
	tp, err := tb.Topology()
	require.NoError(t, err)
	assert.Equal(t, "testbed-gpu-2x4x2", tp.Name)
	assert.Equal(t, 8, tp.NumGPUs())
	n := tp.Nodes[1]
	assert.Equal(t, "H200", n.GPUs[3].Model)
	assert.Equal(t, 1, n.GPUs[3].Rail, "rank 3 of a node owns rail 3 %% 2")

	hops, err := n.Route(GPUEndpoint(0), GPUEndpoint(3))
	require.NoError(t, err)
	require.Len(t, hops, 2, "GPU to switch to GPU")
	alpha, gbps := n.PathCost(hops)
	assert.Equal(t, float64(TestbedNVLinkGBps), gbps)
	assert.InDelta(t, TestbedNVLinkAlphaUS, alpha, 1e-9, "one push's start-up, half on each switch link")
	for _, h := range hops {
		assert.Equal(t, NVSwitch, n.Links[h.Link].Kind, "NVLink traffic never crosses the CPU's copy link")
	}

	src, dst, err := tp.RailRoute(0, 3, 1, 1, 1)
	require.NoError(t, err)
	kinds := func(node Node, hops []Hop) (out []Link) {
		for _, h := range hops {
			out = append(out, node.Links[h.Link])
		}
		return out
	}
	s := kinds(tp.Nodes[0], src)
	require.Len(t, s, 3, "GPU, host memory, NIC, rail")
	assert.Equal(t, Link{Kind: PCIe, A: "gpu:3", B: "host:0", Count: 1, AlphaUS: TestbedStageAlphaUS, BetaGBps: TestbedStageGBps, FullDuplex: true}, s[0], "the staging copy")
	assert.Equal(t, "nic:1", s[1].A)
	assert.InDelta(t, 2*8.0/8, s[1].BetaGBps, 1e-12, "rail 1's copy link: the shares of local ranks 1 and 3, 8 GB/s over 8 ranks each")
	assert.Equal(t, 0.125, s[2].BetaGBps, "the NIC port at the rail's rate")
	d := kinds(tp.Nodes[1], dst)
	require.Len(t, d, 3)
	assert.Equal(t, "gpu:1", d[2].A, "received into host memory, staged to the GPU")

	data, err := Marshal(tp)
	require.NoError(t, err)
	_, err = Parse(data)
	require.NoError(t, err, "the GPU form is a valid goring.topo/v1 file")

	one := tb
	one.PPN, one.Rails = 1, 1
	_, err = one.Topology()
	require.NoError(t, err, "one GPU a node: no NVLink")
	bad := g
	bad.NVLinkGBps = 0
	tb.GPU = &bad
	_, err = tb.Topology()
	assert.Error(t, err)
}

// A --mem cuda run's topology: tc's rate, the default GPU figures.
func TestMeasuredGPUTestbed(t *testing.T) {
	tp, err := MeasuredGPUTestbed(2, 2, 2, "1gbit", TestbedRailAlphaUS)
	require.NoError(t, err)
	assert.Equal(t, "testbed-gpu-2x2x2", tp.Name)
	assert.Equal(t, 0.125, tp.Rails[1].BetaGBps)
	_, err = MeasuredGPUTestbed(2, 2, 2, "fast", TestbedRailAlphaUS)
	assert.Error(t, err)
}
