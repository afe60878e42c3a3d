package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/topo"
)

// A testbed run's prediction is the simulator's time of the whole plan,
// the plan the rows measured; on lanes, every lane's plan at once.
func TestPredict(t *testing.T) {
	tp, err := topo.Testbed{Nodes: 2, PPN: 2, Rails: 2, RailGBps: 0.0625, RailAlphaUS: topo.TestbedRailAlphaUS,
		CopyGBps: topo.TestbedCopyGBps, CopyAlphaUS: topo.TestbedCopyAlphaUS}.Topology()
	require.NoError(t, err)
	cfg := &Config{Topo: tp, Collective: coll.Allreduce, Dtype: coll.Float32, Op: coll.Sum}
	got, err := cfg.Predict("ring", 1<<20, 0)
	require.NoError(t, err)
	res, _, err := sim.Run(sched.Spec{Collective: coll.Allreduce, Algorithm: "ring", Topo: tp, Bytes: 1 << 20, DtypeBytes: 4}, sim.Options{})
	require.NoError(t, err)
	assert.Equal(t, res.TotalUS, got.SlowestUS)
	assert.Equal(t, res.MeanRankEndUS(), got.MeanUS)

	lanes, err := cfg.Predict("ring", 1<<20, 2)
	require.NoError(t, err)
	assert.Positive(t, lanes.MeanUS)
	assert.LessOrEqual(t, lanes.MeanUS, lanes.SlowestUS)

	cfg.Collective = coll.Alltoallv
	_, err = cfg.Predict("pairwise", 1<<20, 0)
	assert.Error(t, err, "alltoallv without a traffic matrix")
}

// With PredictTopo (a --mem cuda testbed run) the plan the rows ran, made
// on Topo, is simulated on the GPU form.
func TestPredictOnPredictTopo(t *testing.T) {
	host, err := topo.MeasuredTestbed(2, 2, 2, "1gbit", topo.TestbedRailAlphaUS)
	require.NoError(t, err)
	gpu, err := topo.MeasuredGPUTestbed(2, 2, 2, "1gbit", topo.TestbedRailAlphaUS)
	require.NoError(t, err)
	cfg := &Config{Topo: host, PredictTopo: gpu, Collective: coll.Allreduce, Dtype: coll.Float32, Op: coll.Sum}
	got, err := cfg.Predict("lane", 4<<20, 0)
	require.NoError(t, err)
	plan, err := sched.Generate(sched.Spec{Collective: coll.Allreduce, Algorithm: "lane", Topo: host, Bytes: 4 << 20, DtypeBytes: 4})
	require.NoError(t, err)
	res, err := sim.Simulate(gpu, plan, sim.Options{})
	require.NoError(t, err)
	assert.Equal(t, res.TotalUS, got.SlowestUS)
	assert.Equal(t, res.MeanRankEndUS(), got.MeanUS)
	cfg.PredictTopo = nil
	onHost, err := cfg.Predict("lane", 4<<20, 0)
	require.NoError(t, err)
	assert.Greater(t, onHost.SlowestUS, got.SlowestUS, "the host form charges the NVLink bytes to the CPU's copies")
}

// leader's ranks finish far apart on the GPU testbed (rank 0 sends the
// result to the other node over one rail, its node-mate has it over
// NVLink at once): the predicted mean is well below the slowest rank, and
// each measured statistic is divided by its own: the average by the mean,
// the slowest rank by the slowest.
func TestPredictionRatiosLikeWithLike(t *testing.T) {
	host, err := topo.MeasuredTestbed(2, 2, 2, "1gbit", topo.TestbedRailAlphaUS)
	require.NoError(t, err)
	gpu, err := topo.MeasuredGPUTestbed(2, 2, 2, "1gbit", topo.TestbedRailAlphaUS)
	require.NoError(t, err)
	cfg := &Config{Topo: host, PredictTopo: gpu, Collective: coll.Allgather, Dtype: coll.Float32}
	p, err := cfg.Predict("leader", 4<<20, 0)
	require.NoError(t, err)
	assert.Less(t, p.MeanUS, 0.9*p.SlowestUS)
	avg, slowest := p.Ratios(Row{AvgUS: 3 * p.MeanUS, MaxUS: 5 * p.SlowestUS})
	assert.InDelta(t, 3, avg, 1e-12)
	assert.InDelta(t, 5, slowest, 1e-12)
}
