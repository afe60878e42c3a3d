package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// A host-staged copy between two GPUs behind one PCIe switch crosses the
// switch's half-duplex uplink to the host twice, up and back down: that
// link carries every byte twice, so the flow moves at half its rate
// as the max-min solver gives it wherever other flows are present.
func TestFlowCrossingALinkTwiceGetsHalfItAlone(t *testing.T) {
	mk := func() *topo.Topology {
		up := link(topo.PCIe, "switch:0", "host:0", 1, 0, 10)
		up.FullDuplex = false
		return &topo.Topology{Name: "sw", Nodes: []topo.Node{testNode(3,
			link(topo.PCIe, "gpu:0", "switch:0", 1, 0, 100),
			link(topo.PCIe, "gpu:1", "switch:0", 1, 0, 100),
			up,
			link(topo.PCIe, "gpu:2", "host:0", 1, 0, 100),
		)}}
	}
	opt := Options{LaunchUS: -1}
	// Alone: 1 MB at 10/2 GB/s is 200 us.
	tp := mk()
	p := testPlan(tp)
	xfer(p, 0, 1, 0, mb, sched.Path{Kind: sched.PathHost})
	alone, err := Simulate(tp, p, opt)
	require.NoError(t, err)
	assert.InDelta(t, 200, alone.TotalUS, 1e-6)

	// The trace's rate alone is the same half, so that the flow does not
	// read as slowed by a congestion it never met.
	tp = mk()
	p = testPlan(tp)
	xfer(p, 0, 1, 0, mb, sched.Path{Kind: sched.PathHost})
	traced, err := Simulate(tp, p, Options{LaunchUS: -1, Trace: true})
	require.NoError(t, err)
	require.Len(t, traced.Transfers, 1)
	assert.InDelta(t, 5, traced.Transfers[0].SoloGBps, 1e-9)
}
