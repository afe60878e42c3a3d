package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEmulatedTopology(t *testing.T) {
	for i, c := range []struct{ nodes, np int }{{1, 1}, {1, 3}, {2, 4}, {4, 16}, {8, 8}} {
		tp, err := EmulatedTopology(c.nodes, c.np)
		require.NoError(t, err, "case %d", i)
		assert.Equal(t, c.np, tp.NumGPUs(), "case %d", i)
		assert.Equal(t, c.nodes, tp.NumNodes(), "case %d", i)
		node, local, ok := tp.Locate(c.np - 1)
		require.True(t, ok)
		assert.Equal(t, c.nodes-1, node, "case %d", i)
		assert.Equal(t, c.np/c.nodes-1, local, "case %d", i)
	}
	tp, err := EmulatedTopology(0, 4)
	require.NoError(t, err)
	assert.Equal(t, 1, tp.NumNodes(), "no --nodes: one node")
	_, err = EmulatedTopology(3, 4)
	assert.Error(t, err)
}
