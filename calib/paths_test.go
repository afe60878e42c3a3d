package calib

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/topo"
)

// testdata/calibration_h200x2.json is what calibrate writes on the 2xH200
// machine: GPU 0 -> GPU 1 direct at 390 GB/s and host-staged at 51 GB/s
// in 8 MiB chunks, and the together samples of docs/gpu.md with their fit.
func h200Calibration(t *testing.T) *Calibration {
	t.Helper()
	f, err := os.Open("testdata/calibration_h200x2.json")
	require.NoError(t, err)
	defer f.Close()
	cal, err := Load(f)
	require.NoError(t, err)
	return cal
}

func presetNode(t *testing.T, name string) *topo.Node {
	t.Helper()
	tp, err := topo.Preset(name)
	require.NoError(t, err)
	return &tp.Nodes[0]
}

// The fixture's stored fit is what FitCalibratedContention makes of its
// samples, so the tests below test the fit's output.
func TestCalibrationFixtureIsFitted(t *testing.T) {
	cal := h200Calibration(t)
	require.Len(t, cal.Contention, 1)
	c := cal.Contention[0]
	refit := c
	require.NoError(t, cal.FitCalibratedContention(&refit, model.DefaultOptions()))
	assert.Equal(t, c, refit)
	assert.InDelta(t, 0, c.DirectSlowdown, 0.02)
	assert.InDelta(t, 0.22, c.StagedSlowdown, 0.03)
}

func TestCalibratedSplitterH200(t *testing.T) {
	cal := h200Calibration(t)
	node := presetNode(t, "h200x2")
	sp, err := NewSplitter(node, cal, model.DefaultOptions())
	require.NoError(t, err)
	assert.True(t, cal.Measured(0, 1))
	assert.False(t, cal.Measured(1, 0))
	assert.Equal(t, []string{"GPU 0 -> GPU 1"}, cal.MeasuredPairs())

	paths, err := sp.Paths(0, 1)
	require.NoError(t, err)
	require.Len(t, paths, 2)
	assert.InDelta(t, 390, paths[0].Beta1GBps, 1e-6)
	assert.InDelta(t, 10, paths[0].Alpha1US, 1e-6)
	assert.Equal(t, cal.Contention[0].Contention(), paths[1].Contention)
	assert.Equal(t, model.MeasuredStagedPath(model.HostName, cal.Paths[1].BetaGBps, 8<<20, model.DefaultOptions().HostStageEpsilonUS).Beta1GBps, paths[1].Beta1GBps)

	s, err := sp.Split(0, 1, 256<<20, model.AllPaths, false)
	require.NoError(t, err)
	th := s.Paths[1].Theta
	assert.GreaterOrEqual(t, th, 0.055, "near the measured best share (6-8%%)")
	assert.LessOrEqual(t, th, 0.085, "below where the measurements turn into a loss")
	assert.InEpsilon(t, 1.08, s.DirectOnlyUS/s.PredictedUS, 0.02)

	// The pair the file did not measure keeps the preset's figures: the
	// NVLink line rate, no contention.
	back, err := sp.Paths(1, 0)
	require.NoError(t, err)
	want, err := model.EnumeratePaths(node, 1, 0, model.DefaultOptions())
	require.NoError(t, err)
	assert.Equal(t, want, back)
}

// A file written before chunk_bytes and contention existed still loads;
// its direct path is used, its staged path (no chunk) gets the measured
// rate with epsilon on top, and nothing contends.
func TestCalibratedSplitterOldFile(t *testing.T) {
	golden, err := os.ReadFile("testdata/calibration_v1.golden.json")
	require.NoError(t, err)
	cal, err := Parse(golden)
	require.NoError(t, err)
	node := presetNode(t, "h200x2")
	paths, measured, err := cal.PairPaths(node, 0, 1, model.DefaultOptions())
	require.NoError(t, err)
	require.True(t, measured)
	assert.Equal(t, model.MeasuredDirectPath(9.5, 390.25), paths[0])
	assert.Equal(t, model.Path{Name: model.HostName, Staged: true, Beta1GBps: 51, Beta2GBps: 51, EpsilonUS: model.DefaultOptions().HostStageEpsilonUS}, paths[1])
	_, err = NewSplitter(node, cal, model.DefaultOptions())
	require.NoError(t, err)
}

func TestCalibrationCheckNode(t *testing.T) {
	cal := h200Calibration(t)
	require.NoError(t, cal.CheckNode(presetNode(t, "h200x2")))

	err := cal.CheckNode(presetNode(t, "clusterB"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "measured on a node of 2 GPUs")
	_, err = NewSplitter(presetNode(t, "clusterB"), cal, model.DefaultOptions())
	require.Error(t, err)

	h100 := *presetNode(t, "h200x2")
	h100.GPUs = append([]topo.GPU(nil), h100.GPUs...)
	for i := range h100.GPUs {
		h100.GPUs[i].Model = "H100"
	}
	err = cal.CheckNode(&h100)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `measured on "NVIDIA H200" GPUs`)

	// Without gpus and gpu_model (older files) the GPUs named still count.
	old := *cal
	old.GPUs, old.GPUModel = 0, ""
	old.Paths = append([]CalibratedPath(nil), cal.Paths...)
	old.Paths[0].To = "GPU 3"
	err = old.CheckNode(presetNode(t, "h200x2"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GPU 0 -> GPU 3")
	assert.Contains(t, err.Error(), `node "node0" has 2 GPUs (0..1)`)
	assert.True(t, sameGPUModel("NVIDIA H200", "h200"))
	assert.False(t, sameGPUModel("NVIDIA H200", "H100"))
}

// A model name that is a prefix of another's (H20 and H200, A10 and A100)
// is another GPU: an H200 calibration must not pass for an H20 machine.
func TestSameGPUModelWholeNames(t *testing.T) {
	assert.True(t, sameGPUModel("NVIDIA H100 80GB HBM3", "H100"))
	assert.True(t, sameGPUModel("NVIDIA A100-SXM4-80GB", "A100"))
	assert.True(t, sameGPUModel("H200", "NVIDIA H200"))
	assert.False(t, sameGPUModel("NVIDIA H200", "NVIDIA H20"))
	assert.False(t, sameGPUModel("NVIDIA H20", "H200"))
	assert.False(t, sameGPUModel("NVIDIA A100-SXM4-80GB", "NVIDIA A10"))
}

func TestCalibrateTopology(t *testing.T) {
	cal := h200Calibration(t)
	tp, err := topo.Preset("h200x2")
	require.NoError(t, err)
	tp2, err := tp.Repeat(2)
	require.NoError(t, err)
	before, err := topo.Marshal(tp2)
	require.NoError(t, err)

	ct, notes, err := cal.CalibrateTopology(tp2)
	require.NoError(t, err)
	after, err := topo.Marshal(tp2)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the input topology is not modified")
	require.NoError(t, ct.Validate())
	require.Len(t, notes, 2, "one note per measured path: %q", notes)
	assert.Equal(t, "direct GPU 0 -> GPU 1 measured 390.00 GB/s, 10.00 us: nvlink gpu:0-gpu:1 x18 478.08 -> 390.00 GB/s, startup 1.50 -> 10.00 us", notes[0])
	assert.Equal(t, "host GPU 0 -> GPU 1 measured 51.00 GB/s, 150.00 us: pcie gpu:0-host:0 x1 50.00 -> 51.00 GB/s; pcie gpu:1-host:0 x1 50.00 -> 51.00 GB/s", notes[1])
	for _, n := range ct.Nodes {
		nv := n.Links[0]
		assert.InDelta(t, 390, nv.BandwidthGBps(), 1e-6)
		assert.InDelta(t, 10, nv.AlphaUS, 1e-6)
		for _, l := range n.Links[1:] {
			require.Equal(t, topo.PCIe, l.Kind)
			assert.InDelta(t, 51, l.BandwidthGBps(), 1e-6, "both legs of the host path at its measured rate")
			assert.InDelta(t, tp.Nodes[0].Links[1].AlphaUS, l.AlphaUS, 0, "a staged path's intercept is not a link startup")
		}
	}

	_, _, err = cal.CalibrateTopology(mustPreset(t, "clusterB"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "measured on a node of 2 GPUs")

	hostOnly, err := os.ReadFile("testdata/calibration_v1_host_only.golden.json")
	require.NoError(t, err)
	hc, err := Parse(hostOnly)
	require.NoError(t, err)
	hc.Skipped = []string{"GPU paths: no NVIDIA driver on this machine"}
	_, _, err = hc.CalibrateTopology(tp)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "measured no GPU path (skipped: GPU paths: no NVIDIA driver")
}

func mustPreset(t *testing.T, name string) *topo.Topology {
	t.Helper()
	tp, err := topo.Preset(name)
	require.NoError(t, err)
	return tp
}
