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
func TestPredictUS(t *testing.T) {
	tp, err := topo.Testbed{Nodes: 2, PPN: 2, Rails: 2, RailGBps: 0.0625, RailAlphaUS: topo.TestbedRailAlphaUS,
		CopyGBps: topo.TestbedCopyGBps, CopyAlphaUS: topo.TestbedCopyAlphaUS}.Topology()
	require.NoError(t, err)
	cfg := &Config{Topo: tp, Collective: coll.Allreduce, Dtype: coll.Float32, Op: coll.Sum}
	got, err := cfg.PredictUS("ring", 1<<20, 0)
	require.NoError(t, err)
	res, _, err := sim.Run(sched.Spec{Collective: coll.Allreduce, Algorithm: "ring", Topo: tp, Bytes: 1 << 20, DtypeBytes: 4}, sim.Options{})
	require.NoError(t, err)
	assert.Equal(t, res.TotalUS, got)

	lanes, err := cfg.PredictUS("ring", 1<<20, 2)
	require.NoError(t, err)
	assert.Positive(t, lanes)

	cfg.Collective = coll.Alltoallv
	_, err = cfg.PredictUS("pairwise", 1<<20, 0)
	assert.Error(t, err, "alltoallv without a traffic matrix")
}

// With PredictTopo (a --mem cuda testbed run) the plan the rows ran, made
// on Topo, is simulated on the GPU form.
func TestPredictUSOnPredictTopo(t *testing.T) {
	host, err := topo.MeasuredTestbed(2, 2, 2, "1gbit", topo.TestbedRailAlphaUS)
	require.NoError(t, err)
	gpu, err := topo.MeasuredGPUTestbed(2, 2, 2, "1gbit", topo.TestbedRailAlphaUS)
	require.NoError(t, err)
	cfg := &Config{Topo: host, PredictTopo: gpu, Collective: coll.Allreduce, Dtype: coll.Float32, Op: coll.Sum}
	got, err := cfg.PredictUS("lane", 4<<20, 0)
	require.NoError(t, err)
	plan, err := sched.Generate(sched.Spec{Collective: coll.Allreduce, Algorithm: "lane", Topo: host, Bytes: 4 << 20, DtypeBytes: 4})
	require.NoError(t, err)
	res, err := sim.Simulate(gpu, plan, sim.Options{})
	require.NoError(t, err)
	assert.Equal(t, res.TotalUS, got)
	cfg.PredictTopo = nil
	onHost, err := cfg.PredictUS("lane", 4<<20, 0)
	require.NoError(t, err)
	assert.Greater(t, onHost, got, "the host form charges the NVLink bytes to the CPU's copies")
}
