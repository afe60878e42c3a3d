package sweep

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/topo"
)

func job(t *testing.T, algs ...string) *Job {
	t.Helper()
	tp, err := topo.Preset("clusterB")
	require.NoError(t, err)
	return &Job{Coll: coll.Allreduce, Sizes: []int64{1 << 10, 1 << 20}, Algs: algs, Topo: tp,
		Base: sched.Spec{Collective: coll.Allreduce, Topo: tp, DtypeBytes: 4}}
}

// Every (algorithm, size) is simulated once, whatever asks for it again,
// and its row is the simulator's time.
func TestRunnerSimulatesOnce(t *testing.T) {
	j := job(t, "ring")
	s := j.NewRunner()
	runs := 0
	s.OnRun = func() { runs++ }
	doc, err := j.Results(s, false)
	require.NoError(t, err)
	require.Len(t, doc.Results, 2)
	_ = s.Row("ring", 1<<20)
	assert.Equal(t, 2, runs)
	spec, err := j.Spec("ring", 1<<20)
	require.NoError(t, err)
	res, _, err := sim.Run(spec, sim.Options{})
	require.NoError(t, err)
	require.NotNil(t, doc.Results[1].PredictedUS)
	assert.Equal(t, res.TotalUS, *doc.Results[1].PredictedUS)
	assert.NotNil(t, doc.Results[1].BusBWGBps)
	assert.Equal(t, 2, j.Runs(false))
	assert.Equal(t, -1, j.Runs(true))
}

// Auto names what it chose; lanes give a row per count, or auto's count.
func TestAutoAndLanes(t *testing.T) {
	j := job(t, "ring", "rabenseifner")
	doc, err := j.Results(j.NewRunner(), true)
	require.NoError(t, err)
	require.Len(t, doc.Results, 2)
	for _, r := range doc.Results {
		assert.Equal(t, "auto", r.Algorithm)
		assert.NotEmpty(t, r.Chosen)
	}

	j = job(t, "ring")
	j.Opt = sim.Options{WorkerGBps: 2}
	j.Lanes = &Lanes{Counts: []int{1, 2}}
	doc, err = j.LaneResults(j.NewRunner())
	require.NoError(t, err)
	require.Len(t, doc.Results, 4)
	assert.Equal(t, 2.0, doc.WorkerGBps)
	assert.Equal(t, 2, doc.Results[1].Lanes)
	j.Lanes = &Lanes{Auto: true, Max: 4}
	doc, err = j.LaneResults(j.NewRunner())
	require.NoError(t, err)
	require.Len(t, doc.Results, 2)
	assert.Contains(t, doc.Results[0].Chosen, "ring:")
}

// A timeline is of one run.
func TestTimeline(t *testing.T) {
	j := job(t, "ring")

	_, _, err := j.Timeline()
	assert.Error(t, err, "two sizes are not one run")
	j.Sizes = []int64{1 << 10}
	res, plan, err := j.Timeline()
	require.NoError(t, err)
	assert.NotEmpty(t, res.Steps)
	assert.NotNil(t, plan)
}

// --alg of goring sim: all and auto are every registered algorithm, a
// name must be registered.
func TestAlgorithms(t *testing.T) {
	all, err := Algorithms(coll.Allgather, "all")
	require.NoError(t, err)
	assert.Equal(t, sched.AlgorithmNames(coll.Allgather), all)
	auto, err := Algorithms(coll.Allgather, "auto")
	require.NoError(t, err)
	assert.Equal(t, all, auto)
	one, err := Algorithms(coll.Allgather, "ring")
	require.NoError(t, err)
	assert.Equal(t, []string{"ring"}, one)
	_, err = Algorithms(coll.Allgather, "nope")
	assert.Error(t, err)
}

// RankAvg adds the ranks' average finish to every row, and only then.
func TestRankAvg(t *testing.T) {
	j := job(t, "ring")
	doc, err := j.Results(j.NewRunner(), false)
	require.NoError(t, err)
	assert.Nil(t, doc.Results[1].PredictedAvgUS)

	j.RankAvg = true
	doc, err = j.Results(j.NewRunner(), false)
	require.NoError(t, err)
	spec, err := j.Spec("ring", 1<<20)
	require.NoError(t, err)
	res, _, err := sim.Run(spec, sim.Options{})
	require.NoError(t, err)
	require.NotNil(t, doc.Results[1].PredictedAvgUS)
	assert.Equal(t, res.MeanRankEndUS(), *doc.Results[1].PredictedAvgUS)
	assert.LessOrEqual(t, *doc.Results[1].PredictedAvgUS, *doc.Results[1].PredictedUS)
}
