package launch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ranks start in their node's namespace, the coordinator in node 0's.
func TestOnTestbed(t *testing.T) {
	var j LocalJob
	j.OnTestbed("gr", 2)
	assert.Equal(t, "gr-node0", j.Netns(1))
	assert.Equal(t, "gr-node1", j.Netns(2))
	assert.Equal(t, "gr-node0", j.CoordNetns)
	assert.Equal(t, TestbedCoordAddr, j.CoordAddr)
}

// A testbed that is not up names its first missing node; what the user
// gave is kept, and nothing is read from node 0 then.
func TestTestbedMissingAndComplete(t *testing.T) {
	tb := Testbed{Prefix: "gnzz-absent", Nodes: 2, Rails: 2, Rate: "1gbit"}
	assert.Equal(t, "gnzz-absent-node0", tb.Missing())
	assert.Equal(t, "", Testbed{Prefix: "gnzz-absent"}.Missing(), "no nodes, none missing")
	require.NoError(t, tb.Complete())
	assert.Equal(t, Testbed{Prefix: "gnzz-absent", Nodes: 2, Rails: 2, Rate: "1gbit"}, tb)
}
