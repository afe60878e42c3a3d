package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/sched"
)

// goring bench COLL --calibration: a bad or mismatching file, or a run
// that cannot split, is refused in one line before any rank starts.
func TestBenchCalibrationRefused(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"schema":"goring.calibration/v1","paths":[{"path":"direct"}]}`), 0o644))
	for i, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--np", "2", "--calibration", calibrationFixture}, "needs --mem cuda and --ipc"},
		{[]string{"--np", "2", "--mem", "cuda", "--ipc=false", "--calibration", calibrationFixture}, "needs --mem cuda and --ipc"},
		{[]string{"--np", "2", "--mem", "cuda", "--calibration", "/nonexistent/cal.json"}, "--calibration /nonexistent/cal.json"},
		{[]string{"--np", "2", "--mem", "cuda", "--calibration", bad}, "--calibration " + bad},
		{[]string{"--np", "2", "--mem", "cuda", "--calibration", calibrationFixture}, `measured on "NVIDIA H200" GPUs; node "node0" has "H100"`},
		{[]string{"--np", "4", "--mem", "cuda", "--topo", "clusterB", "--calibration", calibrationFixture}, "measured on a node of 2 GPUs"},
		{[]string{"--np", "2", "--mem", "cuda", "--calibration", calibrationFixture}, "--calibration " + calibrationFixture},
	} {
		stdout, stderr, code := runCLI(t, append([]string{"bench", "allgather"}, c.args...)...)
		assert.NotZero(t, code, "case %d", i)
		assert.Empty(t, stdout, "case %d", i)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "case %d: one line: %q", i, stderr)
		assert.Contains(t, stderr, c.want, "case %d", i)
	}
	_, stderr, code := runCLI(t, "bench", "p2p", "--mem", "cuda", "--calibration", calibrationFixture)
	assert.NotZero(t, code)
	assert.Contains(t, stderr, "--calibration is for collectives")
}

// A file that fits the job's node passes the check: without a driver the
// job then stops at --mem cuda, exit 3, and not at the calibration.
func TestBenchCalibrationAccepted(t *testing.T) {
	if _, err := cuda.DeviceCount(); !cuda.IsNoDriver(err) {
		t.Skip("a CUDA driver is present; the device runs cover --calibration")
	}
	_, stderr, code := runCLI(t, "bench", "allgather", "--np", "2", "--mem", "cuda", "--topo", "h200x2", "--calibration", calibrationFixture, "--bytes", "1KiB")
	assert.Equal(t, 3, code, stderr)
	assert.Contains(t, stderr, "--mem cuda: no CUDA driver")
}

// Each rank's planner: its programs carry step loads, peers on its node
// are planned by their local GPU, peers on other nodes never split.
func TestBenchCalibrationPlanner(t *testing.T) {
	f := &benchFlags{mem: "cuda", ipc: true, lanes: "1", calibration: calibrationFixture, topo: "h200x2", nodes: 2, bytes: "256MiB", alg: "ring", dtype: "float32", op: "sum"}
	job, err := prepareBench(f, "allgather", 4)
	require.NoError(t, err)
	assert.True(t, job.cfg.StepLoads)
	pl := job.planners.ForRank(2) // node 1, GPU 0
	require.NotNil(t, pl)
	assert.NotNil(t, pl(3, 256<<20, sched.Path{}), "the idle pair of its node splits")
	assert.Nil(t, pl(0, 256<<20, sched.Path{}), "a peer on another node")
	assert.Nil(t, pl(3, 256<<20, sched.Path{Kind: sched.PathDirect}))
	f.calibration = ""
	job, err = prepareBench(f, "allgather", 4)
	require.NoError(t, err)
	assert.Nil(t, job.planners.ForRank(0))
	assert.False(t, job.cfg.StepLoads)
}
