package team

import (
	"errors"
	"testing"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cudaexec"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/nodeexec"

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

// A rank whose node regions could not be made (or whose card failed)
// knows it alone until the set-up exchange has told every rank: until
// then it must choose as its peers do, or a call made now and posted
// first would run as messages on it and as node kernels on the others.
func TestNodeCapableWaitsForTheTeamsVerdict(t *testing.T) {
	o, err := parseOptions("")
	require.NoError(t, err)
	tm := &Team{ctx: &Context{opts: o}, oneHost: true, size: 4, engine: cudaexec.NewEngine()}
	assert.True(t, tm.nodeCapable(), "no node call yet")
	tm.node = &nodeState{off: errors.New("out of memory on this rank")}
	assert.True(t, tm.nodeCapable(), "a failure this rank alone knows, before the set-up exchange")
	tm.node.ready = true
	assert.False(t, tm.nodeCapable(), "after the exchange every rank knows it")
	tm.node.off = nil
	assert.True(t, tm.nodeCapable(), "set up")
}

// A pair's large calls run as the messages where those measured faster
// than the node kernels (choose.Row.OverNode): every rank decides alike
// from the call's bytes, and four ranks keep the kernels.
func TestRunsNodeLeavesMeasuredSizesToTheMessages(t *testing.T) {
	o, err := parseOptions("")
	require.NoError(t, err)
	team := func(size int) *Team {
		return &Team{ctx: &Context{opts: o}, oneHost: true, size: size, engine: cudaexec.NewEngine()}
	}
	dev := exec.CUDA(0)
	ar := Args{Coll: coll.Allreduce, Dtype: coll.Float32, Op: coll.Sum}
	ag := Args{Coll: coll.Allgather, Dtype: coll.Uint8}
	assert.True(t, team(2).runsNode(ar, dev, 32<<20), "a pair's 32 MiB allreduce: the kernels")
	assert.False(t, team(2).runsNode(ar, dev, 128<<20), "a pair's 128 MiB allreduce: ring in two pieces")
	assert.True(t, team(4).runsNode(ar, dev, 128<<20), "four ranks: the kernels in pieces")
	assert.True(t, team(2).runsNode(ag, dev, 16<<20), "a pair's 16 MiB allgather: the kernel")
	assert.False(t, team(2).runsNode(ag, dev, 32<<20), "a pair's 32 MiB allgather: the copies")
}

func TestNodeLingerOption(t *testing.T) {
	o, err := parseOptions("")
	require.NoError(t, err)
	assert.Equal(t, nodeexec.DefaultLinger, o.nodeLinger)
	for v, want := range map[string]time.Duration{"off": 0, "0": 0, "0s": 0, "20us": 20 * time.Microsecond, "10ms": 10 * time.Millisecond} {
		o, err := parseOptions("node_linger=" + v)
		require.NoError(t, err, v)
		assert.Equal(t, want, o.nodeLinger, v)
	}
	for _, bad := range []string{"-1us", "11ms", "1s", "abc", "", "50"} {
		_, err := parseOptions("node_linger=" + bad)
		assert.ErrorContains(t, err, "node_linger", bad)
	}
}

func TestNodeLLOption(t *testing.T) {
	o, err := parseOptions("")
	require.NoError(t, err)
	assert.Equal(t, int64(nodeexec.DefaultLLMax), o.nodeLL)
	for v, want := range map[string]int64{"off": 0, "0": 0, "64K": 64 << 10, "512K": 512 << 10, "4096": 4096} {
		o, err := parseOptions("node_ll=" + v)
		require.NoError(t, err, v)
		assert.Equal(t, want, o.nodeLL, v)
	}
	for _, bad := range []string{"-1", "513K", "1M", "abc", ""} {
		_, err := parseOptions("node_ll=" + bad)
		assert.ErrorContains(t, err, "node_ll", bad)
	}
}
