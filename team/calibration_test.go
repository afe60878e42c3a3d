package team

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/cudaexec"
)

const calibrationFixture = "../calib/testdata/calibration_h200x2.json"

func fixtureCalibration(t *testing.T) *calib.Calibration {
	t.Helper()
	data, err := os.ReadFile(calibrationFixture)
	require.NoError(t, err)
	cal, err := calib.Parse(data)
	require.NoError(t, err)
	return cal
}

// UCC_TL_GORING_CALIBRATION: a file that does not load or is no valid
// calibration refuses the context with the reason (UCC logs it), as an
// invalid parameter.
func TestContextRefusesBadCalibration(t *testing.T) {
	o, err := parseOptions("calibration=/x/cal.json;ipc=y")
	require.NoError(t, err)
	assert.Equal(t, "/x/cal.json", o.calibration)

	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"schema":"goring.calibration/v2","paths":[]}`), 0o644))
	for _, c := range []struct{ file, want string }{
		{"/nonexistent/cal.json", "calibration /nonexistent/cal.json: open"},
		{bad, "calibration " + bad + ": "},
	} {
		_, err := NewContext("calibration="+c.file, testTable{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
		assert.Equal(t, StatusInvalid, StatusOf(err))
	}
	if cuda.Load() != nil {
		_, err := NewContext("calibration="+calibrationFixture, testTable{})
		require.Error(t, err, "no CUDA driver: nothing to split")
		assert.Contains(t, err.Error(), "splits GPU transfers, but")
	}
}

// A calibration of another machine is refused: GPU count and model as
// the driver reports them.
func TestCalibrationMachineCheck(t *testing.T) {
	cal := fixtureCalibration(t) // 2 x "NVIDIA H200"
	assert.NoError(t, checkMachine(cal, []string{"NVIDIA H200", "NVIDIA H200"}))
	assert.ErrorContains(t, checkMachine(cal, []string{"NVIDIA H200"}), "measured on a machine of 2 GPUs; this one has 1")
	assert.ErrorContains(t, checkMachine(cal, []string{"NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"}), `measured on "NVIDIA H200" GPUs`)
	assert.ErrorContains(t, checkMachine(cal, nil), "no GPU")
}

// A team uses the calibration when its ranks on this host are one node of
// its topology with the file's GPU count; otherwise it runs unsplit and
// says why.
func TestTeamPlanner(t *testing.T) {
	mc := &machineCalibration{file: calibrationFixture, cal: fixtureCalibration(t), gpuModel: "NVIDIA H200"}
	team := func(rank int, hosts []string) *Team {
		tp, err := teamTopology(hosts)
		require.NoError(t, err)
		tm := &Team{ctx: &Context{cal: mc}, rank: rank, size: len(hosts), topo: tp, engine: cudaexec.NewEngine()}
		tm.usePlanner(hosts)
		return tm
	}
	tm := team(1, []string{"a", "a"})
	assert.Empty(t, tm.noSplit)
	assert.True(t, tm.plans.stepLoads, "plans carry their step loads")

	tm = team(3, []string{"a", "a", "b", "b"})
	assert.Empty(t, tm.noSplit, "two hosts of two GPUs: each host a node")
	assert.True(t, tm.plans.stepLoads)

	tm = team(0, []string{"a", "a", "a", "a"})
	assert.Contains(t, tm.noSplit, "measured on a node of 2 GPUs")
	assert.False(t, tm.plans.stepLoads)

	tm = team(0, []string{"a", "b", "a", "b"})
	assert.Contains(t, tm.noSplit, "not one node")

	// Two emulated nodes of two on one host (goring bench --nodes 2): the
	// topology the caller set says which ranks are a node.
	emulated, err := shapeTopology(2, 2)
	require.NoError(t, err)
	tm = &Team{ctx: &Context{cal: mc}, rank: 2, size: 4, topo: emulated, setTopo: emulated, engine: cudaexec.NewEngine()}
	tm.usePlanner([]string{"a", "a", "a", "a"})
	assert.Empty(t, tm.noSplit, "the caller's nodes on one host")
	assert.True(t, tm.plans.stepLoads)

	tm = &Team{ctx: &Context{}, engine: cudaexec.NewEngine()}
	tm.usePlanner([]string{"a"})
	assert.False(t, tm.plans.stepLoads, "no calibration: nothing to do")
}
