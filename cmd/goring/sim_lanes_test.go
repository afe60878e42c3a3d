package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/goring-hpc/goring/sweep"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func simLanesJSON(t *testing.T, args ...string) sweep.Doc {
	t.Helper()
	stdout, stderr, code := runCLI(t, append([]string{"sim", "allreduce", "--topo", "clusterB", "--no-progress", "--json"}, args...)...)
	require.Zero(t, code, stderr)
	var doc sweep.Doc
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	return doc
}

func TestSimLanes(t *testing.T) {
	doc := simLanesJSON(t, "--alg", "ring", "--bytes", "64MiB", "--lanes", "1,2,4", "--worker-gbps", "2")
	require.Len(t, doc.Results, 3)
	assert.Equal(t, 2.0, doc.WorkerGBps)
	us := map[int]float64{}
	for _, r := range doc.Results {
		require.NotNil(t, r.PredictedUS, r.Error)
		us[r.Lanes] = *r.PredictedUS
	}
	assert.Greater(t, us[1]/us[4], 3.0, "host-bound workers: 4 lanes about 4x")
	// The cores of a node move NodeCores workers' bytes: four ranks whose
	// ring flows each cross one worker on either side fill 4 cores at two
	// lanes a rank, and auto stops there.
	doc = simLanesJSON(t, "--alg", "ring", "--bytes", "64MiB", "--lanes", "auto", "--worker-gbps", "2", "--node-cores", "4")
	require.Len(t, doc.Results, 1)
	assert.Equal(t, 2, doc.Results[0].Lanes)
	assert.Equal(t, "ring:2 lanes", doc.Results[0].Chosen)
	// Without --lanes: no worker model, no lanes in the document.
	stdout, stderr, code := runCLI(t, "sim", "allreduce", "--topo", "clusterB", "--no-progress", "--json", "--alg", "ring", "--bytes", "1MiB")
	require.Zero(t, code, stderr)
	assert.NotContains(t, stdout, "lanes")
	assert.NotContains(t, stdout, "worker")
	// The table names each lane count's column.
	stdout, stderr, code = runCLI(t, "sim", "allreduce", "--topo", "clusterB", "--no-progress", "--alg", "ring", "--bytes", "1MiB", "--lanes", "1,8")
	require.Zero(t, code, stderr)
	assert.Contains(t, stdout, "ring/L1(us)")
	assert.Contains(t, stdout, "ring/L8(us)")
}

func TestSimLanesBadInput(t *testing.T) {
	for i, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--lanes", "0"}, "lanes 0: want 1 to 64"},
		{[]string{"--lanes", "two"}, "want a count, a comma list of counts, or auto"},
		{[]string{"--lanes", "2", "--alg", "auto"}, "give --alg a name or all"},
		{[]string{"--lanes", "2", "--worker-gbps", "-1"}, "want positive figures"},
		{[]string{"--lanes", "auto", "--max-lanes", "99"}, "--max-lanes: lanes 99"},
		// The worker model's flags without --lanes were dropped unsaid.
		{[]string{"--worker-gbps", "2"}, "--worker-gbps, --node-cores and --lanes-on-rails need --lanes"},
		{[]string{"--node-cores", "4"}, "need --lanes"},
		{[]string{"--lanes-on-rails"}, "need --lanes"},
	} {
		args := append([]string{"sim", "allreduce", "--topo", "clusterB", "--bytes", "1MiB", "--no-progress"}, c.args...)
		if !contains(c.args, "--alg") {
			args = append(args, "--alg", "ring")
		}
		stdout, stderr, code := runCLI(t, args...)
		assert.NotZero(t, code, "case %d", i)
		assert.Empty(t, stdout, "case %d", i)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "case %d: %q", i, stderr)
		assert.Contains(t, stderr, c.want, "case %d", i)
	}
	stdout, stderr, code := runCLI(t, "sim", "alltoallv", "--topo", "clusterB", "--bytes", "1MiB", "--no-progress", "--alg", "pairwise", "--lanes", "2")
	assert.NotZero(t, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "alltoallv runs on one lane")
}
