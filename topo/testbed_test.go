package topo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTestbedTopology(t *testing.T) {
	tb := Testbed{Nodes: 4, PPN: 4, Rails: 2, RailGBps: 0.0625, RailAlphaUS: 60, CopyGBps: 3.2, CopyAlphaUS: 5}
	tp, err := tb.Topology()
	require.NoError(t, err)
	assert.Equal(t, 16, tp.NumGPUs())
	require.Len(t, tp.Rails, 2)
	assert.Equal(t, 0.0625, tp.Rails[1].BetaGBps)
	assert.Equal(t, 1, tp.Nodes[3].GPUs[3].Rail, "rank 3 of a node owns rail 3 %% 2")
	src, _, err := tp.RailRoute(0, 3, 3, 3, 1)
	require.NoError(t, err)
	var nic Link
	for _, h := range src {
		if l := tp.Nodes[3].Links[h.Link]; l.Kind == NIC {
			nic = l
		}
	}
	assert.Equal(t, 0.0625, nic.BetaGBps, "the NIC port runs at the rail's rate")
	hops, err := tp.Nodes[0].Route(GPUEndpoint(0), GPUEndpoint(1))
	require.NoError(t, err)
	require.Len(t, hops, 2, "two ranks of a node: through the host")
	assert.InDelta(t, 0.2, tp.Nodes[0].Links[hops[0].Link].BetaGBps, 1e-12, "a rank's share of the copy throughput: 3.2 GB/s over 16 ranks")
	alphaUS, _ := tp.Nodes[0].PathCost(hops)
	assert.InDelta(t, 5, alphaUS, 1e-12, "a message between two ranks of a node starts in CopyAlphaUS, not twice that")
	data, err := Marshal(tp)
	require.NoError(t, err)
	back, err := Parse(data)
	require.NoError(t, err, "a testbed topology is a valid goring.topo/v1 file")
	assert.Equal(t, tp.Name, back.Name)
	for _, bad := range []Testbed{{Nodes: 0, PPN: 1, Rails: 1, RailGBps: 1, CopyGBps: 1}, {Nodes: 1, PPN: 2, Rails: 3, RailGBps: 1, CopyGBps: 1}, {Nodes: 1, PPN: 1, Rails: 1, CopyGBps: 1}} {
		_, err := bad.Topology()
		assert.Error(t, err)
	}
}

// A testbed run's topology: tc's rate on the rails, the measured copy
// figures shared by every rank; a rate tc would not write is refused.
func TestMeasuredTestbed(t *testing.T) {
	tp, err := MeasuredTestbed(2, 2, 2, "1gbit", TestbedRailAlphaUS)
	require.NoError(t, err)
	assert.Equal(t, "testbed-2x2x2", tp.Name)
	assert.Equal(t, 0.125, tp.Rails[0].BetaGBps)
	assert.Equal(t, float64(TestbedRailAlphaUS), tp.Rails[0].AlphaUS)
	_, err = MeasuredTestbed(2, 2, 2, "fast", TestbedRailAlphaUS)
	assert.Error(t, err)
}
