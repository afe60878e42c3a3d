package topo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSyntheticShapes(t *testing.T) {
	for i, c := range []struct{ nodes, gpus, sockets int }{
		{1, 1, 1}, {1, 2, 2}, {3, 4, 1}, {2, 6, 2}, {16, 8, 2}, {64, 1, 1},
	} {
		tp, err := Synthetic("s", c.nodes, c.gpus, c.sockets)
		require.NoError(t, err, "case %d", i)
		assert.Equal(t, c.nodes*c.gpus, tp.NumGPUs(), "case %d", i)
		assert.Equal(t, c.gpus, tp.GPUsPerNode(), "case %d", i)
		assert.Len(t, tp.Rails, c.gpus, "case %d", i)
		n := &tp.Nodes[len(tp.Nodes)-1]
		assert.Equal(t, c.sockets-1, n.GPUs[c.gpus-1].Socket, "case %d: GPUs fill every socket", i)
		if c.gpus > 1 {
			hops, err := n.Route(GPUEndpoint(0), GPUEndpoint(c.gpus-1))
			require.NoError(t, err, "case %d", i)
			assert.Len(t, hops, 1, "case %d: full mesh", i)
		}
		src, dst, err := tp.RailRoute(0, c.gpus-1, len(tp.Nodes)-1, c.gpus-1, c.gpus-1)
		require.NoError(t, err, "case %d", i)
		assert.Len(t, src, 2, "case %d: GPU -> NIC -> rail", i)
		assert.Len(t, dst, 2, "case %d", i)
	}
}

func TestSyntheticRejectsBadShapes(t *testing.T) {
	for i, c := range []struct{ nodes, gpus, sockets int }{{1, 0, 1}, {1, 2, 3}, {0, 2, 1}, {1, 2, 0}} {
		_, err := Synthetic("s", c.nodes, c.gpus, c.sockets)
		assert.Error(t, err, "case %d", i)
	}
}
