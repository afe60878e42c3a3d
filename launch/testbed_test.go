package launch

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
