package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBenchNetnsBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "allgather", "--np", "2", "--ppn", "2"}, "need --netns"},
		{[]string{"bench", "allgather", "--netns", "gnzz", "--nodes", "2"}, "--ppn"},
		{[]string{"bench", "allgather", "--netns", "gnzz", "--nodes", "2", "--ppn", "2", "--np", "3"}, "--np 3 is not --nodes 2 x --ppn 2"},
		{[]string{"bench", "allgather", "--netns", "gnzz", "--nodes", "2", "--ppn", "2"}, "no namespace gnzz-node0"},
		{[]string{"bench", "allgather", "--netns", "gnzz", "--nodes", "2", "--ppn", "2", "--mem", "cuda"}, "no namespace gnzz-node0"},
		{[]string{"bench", "allgather", "--netns", "gnzz", "--nodes", "2", "--ppn", "2", "--mem", "cuda:1"}, "host or cuda memory"},
	} {
		_, stderr, code := runCLI(t, c.args...)
		assert.NotEqual(t, 0, code, "%v", c.args)
		assert.Contains(t, stderr, c.want, "%v", c.args)
	}
}

func TestTopoTestbed(t *testing.T) {
	out, stderr, code := runCLI(t, "topo", "testbed", "--nodes", "4", "--ppn", "4", "--rails", "4", "--rate", "500mbit", "--json")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, `"name": "testbed-4x4x4"`)
	assert.Contains(t, out, `"beta_GBps": 0.0625`)
	_, stderr, code = runCLI(t, "topo", "testbed", "--rate", "fast")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, `rate "fast"`)
}

// --gpu prints the GPU form; its figures without --gpu are refused.
func TestTopoTestbedGPU(t *testing.T) {
	out, stderr, code := runCLI(t, "topo", "testbed", "--nodes", "2", "--ppn", "2", "--rails", "2", "--rate", "1gbit", "--gpu", "--json")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, `"name": "testbed-gpu-2x2x2"`)
	assert.Contains(t, out, `"kind": "nvswitch"`)
	_, stderr, code = runCLI(t, "topo", "testbed", "--nvlink-gbps", "100")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "add --gpu")
}

// A --mem cuda testbed run predicts on the GPU form; host memory, or a
// topology of the user's, on the job's own.
func TestBenchPredictTopology(t *testing.T) {
	f := &benchFlags{nodes: 2, mem: "cuda"}
	f.netns = netnsFlags{prefix: "gd", ppn: 2, rails: 2, rate: "1Gbit", alpha: 30}
	tp, err := f.predictTopology(4)
	require.NoError(t, err)
	require.NotNil(t, tp)
	assert.Equal(t, "testbed-gpu-2x2x2", tp.Name)
	f.mem = "host"
	tp, err = f.predictTopology(4)
	require.NoError(t, err)
	assert.Nil(t, tp)
	f.mem, f.topo = "cuda", "some.json"
	tp, err = f.predictTopology(4)
	require.NoError(t, err)
	assert.Nil(t, tp)
}
