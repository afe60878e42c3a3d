package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --rank-avg adds the ranks' average finish beside the last rank's, in
// the table and in --json; without it both are as before. leader on the
// GPU testbed finishes its ranks far apart: the average is below.
func TestSimRankAvg(t *testing.T) {
	tb, stderr, code := runCLI(t, "topo", "testbed", "--nodes", "2", "--ppn", "2", "--rails", "2", "--rate", "1gbit", "--gpu", "--json")
	require.Equal(t, 0, code, stderr)
	file := filepath.Join(t.TempDir(), "tbg.json")
	require.NoError(t, os.WriteFile(file, []byte(tb), 0o644))
	args := []string{"allgather", "--alg", "leader", "--topo", file, "--bytes", "4MiB"}

	doc := simJSON(t, append(args, "--json")...)
	require.Len(t, doc.Results, 1)
	assert.Nil(t, doc.Results[0].PredictedAvgUS)
	out, stderr, code := runCLI(t, append([]string{"sim"}, args...)...)
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, out, "avg(us)")

	doc = simJSON(t, append(args, "--json", "--rank-avg")...)
	r := doc.Results[0]
	require.NotNil(t, r.PredictedUS)
	require.NotNil(t, r.PredictedAvgUS)
	assert.Less(t, *r.PredictedAvgUS, 0.9**r.PredictedUS)
	out, stderr, code = runCLI(t, append([]string{"sim", "--rank-avg"}, args...)...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "avg(us)")

	_, stderr, code = runCLI(t, append([]string{"sim", "--rank-avg", "--png", filepath.Join(t.TempDir(), "x.png")}, args...)...)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "--rank-avg")
}
