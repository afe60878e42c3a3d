package team

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Which teams may run node calls, and so load the node kernels (19 MB of
// embedded cubin) at their first GPU call: one host, a GPU each, 2 to 8
// ranks, neither the node kernels nor IPC turned off. Processes that
// share one GPU, teams across hosts and single ranks never launch them.
func TestMayRunNode(t *testing.T) {
	team := func(opts string, oneHost, sharedGPU bool, size int) *Team {
		o, err := parseOptions(opts)
		require.NoError(t, err)
		return &Team{ctx: &Context{opts: o}, oneHost: oneHost, sharedGPU: sharedGPU, size: size}
	}
	assert.True(t, team("", true, false, 4).mayRunNode(), "a node of four GPUs")
	assert.True(t, team("", true, false, 2).mayRunNode(), "two GPUs")
	assert.False(t, team("", true, true, 4).mayRunNode(), "four processes on one GPU")
	assert.False(t, team("", false, false, 4).mayRunNode(), "across hosts")
	assert.False(t, team("", true, false, 1).mayRunNode(), "one rank")
	assert.False(t, team("", true, false, 9).mayRunNode(), "more ranks than the node kernels serve")
	assert.False(t, team("node_max=0", true, false, 4).mayRunNode(), "node kernels off")
	assert.False(t, team("ipc=n", true, false, 4).mayRunNode(), "IPC off")
}
