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
	// No count to choose from is an error, not zero lanes.
	w, _, err = ChooseLanes(0, func(int) (float64, error) { return 1, nil })
	assert.Error(t, err)
	assert.Zero(t, w)
}

// Nodes of 4 rails whose GPUs all sit on rail 0 (one rank per NIC port,
// as a testbed node whose one worker per rank takes rail 0): one lane
// crosses rail 0 only; with LanesOnRails, 4 lanes spread over the 4 rails
// and the inter-node phase speeds up.
func TestLanesOnRails(t *testing.T) {
	tp, err := topo.Synthetic("rails", 2, 4, 1)
	require.NoError(t, err)
	for ni := range tp.Nodes {
		for gi := range tp.Nodes[ni].GPUs {
			tp.Nodes[ni].GPUs[gi].Rail = 0
		}
	}
	spec := sched.Spec{Collective: coll.Allreduce, Algorithm: "ring", Topo: tp, Bytes: 64 << 20, DtypeBytes: 4}
	us := func(w int, opt Options) float64 {
		res, err := RunLanes(spec, w, opt)
		require.NoError(t, err)
		return res.TotalUS
	}
	fast := Options{WorkerGBps: 1000}
	assert.InDelta(t, us(1, fast), us(4, fast), us(1, fast)*0.05, "all lanes on rail 0: no gain")
	fast.LanesOnRails = true
	assert.Greater(t, us(1, fast)/us(4, fast), 1.3, "a rail per lane")
}
