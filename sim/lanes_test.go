package sim

import (
	"errors"
	"testing"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func laneSpec(t *testing.T, nodes, gpus int, alg string, bytes int64) sched.Spec {
	tp, err := topo.Synthetic("lanes", nodes, gpus, 1)
	require.NoError(t, err)
	return sched.Spec{Collective: coll.Allreduce, Algorithm: alg, Topo: tp, Bytes: bytes, DtypeBytes: 4}
}

// One lane without the worker model is the plain simulation.
func TestRunLanesOneLaneIsRun(t *testing.T) {
	spec := laneSpec(t, 2, 2, "ring", 1<<20)
	want, _, err := Run(spec, Options{})
	require.NoError(t, err)
	got, err := RunLanes(spec, 1, Options{})
	require.NoError(t, err)
	assert.Equal(t, want.TotalUS, got.TotalUS)
	_, err = RunLanes(spec, 2, Options{})
	assert.ErrorContains(t, err, "worker rate")
}

// Host-bound (a 2 GB/s worker behind a far faster NIC): lanes multiply the
// rank's rate until the node's cores run out; NIC-bound (fast workers):
// lanes change little.
func TestLanesParalleliseWorkers(t *testing.T) {
	spec := laneSpec(t, 2, 1, "ring", 64<<20)
	us := func(w int, opt Options) float64 {
		res, err := RunLanes(spec, w, opt)
		require.NoError(t, err)
		return res.TotalUS
	}
	host := Options{WorkerGBps: 2}
	assert.Greater(t, us(1, host)/us(4, host), 3.0, "4 lanes drive 4 workers")
	cores := Options{WorkerGBps: 2, NodeCores: 2}
	assert.InDelta(t, us(2, cores), us(4, cores), us(2, cores)*0.05, "beyond 2 cores lanes do not help")
	assert.Greater(t, us(1, cores)/us(2, cores), 1.8, "up to the cores they do")
	nic := Options{WorkerGBps: 1000}
	assert.InDelta(t, us(1, nic), us(4, nic), us(1, nic)*0.05, "NIC-bound: lanes share the same ports")
	res, err := RunLanes(spec, 4, host)
	require.NoError(t, err)
	assert.Contains(t, res.Bottleneck, "worker", "host-bound: a worker is the bottleneck")
}

// Alltoallv has no lane split.
func TestRunLanesRefuses(t *testing.T) {
	spec := laneSpec(t, 1, 2, "ring", 4096)
	spec.Collective = coll.Alltoallv
	_, err := RunLanes(spec, 2, Options{WorkerGBps: 2})
	assert.ErrorContains(t, err, "alltoallv runs on one lane")
}

func TestChooseLanes(t *testing.T) {
	times := map[int]float64{1: 100, 2: 60, 3: 52, 4: 50, 5: 50, 6: 51, 7: 55, 8: 60}
	w, us, err := ChooseLanes(8, func(w int) (float64, error) { return times[w], nil })
	require.NoError(t, err)
	assert.Equal(t, 3, w, "the fewest lanes within 5%% of the best (50)")
	assert.Equal(t, 52.0, us)
	w, _, err = ChooseLanes(4, func(w int) (float64, error) {
		if w%2 == 1 {
			return 0, errors.New("odd")
		}
		return float64(100 / w), nil
	})
	require.NoError(t, err)
	assert.Equal(t, 4, w)
	_, _, err = ChooseLanes(2, func(int) (float64, error) { return 0, errors.New("none") })
	assert.ErrorContains(t, err, "none")
}
