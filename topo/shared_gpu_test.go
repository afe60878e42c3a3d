package topo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSharedGPUTopology(t *testing.T) {
	tp, err := SharedGPU{Model: "H100", Procs: 4, CopyGBps: 1490, StepUS: 600}.Topology()
	require.NoError(t, err)
	n := &tp.Nodes[0]
	require.Len(t, n.GPUs, 4)
	for _, g := range n.GPUs {
		assert.Equal(t, 4, g.Share, "each process a quarter of the GPU")
		assert.Equal(t, NoRail, g.Rail)
	}
	// A transfer between two processes crosses two hub links: the step's
	// cost once, and a quarter of the copy rate.
	hops, err := n.Route(GPUEndpoint(0), GPUEndpoint(3))
	require.NoError(t, err)
	alpha, bw := n.PathCost(hops)
	assert.InDelta(t, 600, alpha, 1e-9)
	assert.InDelta(t, 1490.0/4, bw, 1e-9)

	// The JSON form keeps the share.
	data, err := Marshal(tp)
	require.NoError(t, err)
	back, err := Parse(data)
	require.NoError(t, err)
	assert.Equal(t, 4, back.Nodes[0].GPUs[2].Share)
}

func TestSharedGPUBadInput(t *testing.T) {
	for _, s := range []SharedGPU{{Procs: 1, CopyGBps: 1}, {Procs: 2}, {Procs: 2, CopyGBps: 1, StepUS: -1}} {
		_, err := s.Topology()
		assert.ErrorContains(t, err, "shared GPU", "%+v", s)
	}
	tp, err := Preset("h100x2")
	require.NoError(t, err)
	tp.Nodes[0].GPUs[0].Share = -1
	assert.ErrorContains(t, tp.Validate(), "share -1")
}
