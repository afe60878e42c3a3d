package sim

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// Rank 0 sends 1 MB to rank 1 over a fast link (50 GB/s) and 1 MB to rank
// 2 over a slow one (10 GB/s), each with 1 µs of startup: rank 1 is done
// at 1 + 20 µs, rank 2 and rank 0 (whose send to 2 ends with its last
// byte) at 1 + 100 µs. TotalUS is the slowest rank; the mean is each
// rank's own end averaged, well below it.
func TestRankEndsFarApart(t *testing.T) {
	tp := &topo.Topology{Name: "fork", Nodes: []topo.Node{testNode(3,
		link(topo.NVLink, "gpu:0", "gpu:1", 2, 1, 25),
		link(topo.NVLink, "gpu:0", "gpu:2", 1, 1, 10),
	)}}
	p := testPlan(tp)
	xfer(p, 0, 1, 0, mb, sched.Path{})
	xfer(p, 0, 2, 0, mb, sched.Path{})
	res, err := Simulate(tp, p, Options{})
	require.NoError(t, err)
	require.Len(t, res.RankEndUS, 3)
	assert.InDelta(t, 101, res.RankEndUS[0], 1e-9)
	assert.InDelta(t, 21, res.RankEndUS[1], 1e-9)
	assert.InDelta(t, 101, res.RankEndUS[2], 1e-9)
	assert.InDelta(t, 101, res.TotalUS, 1e-9)
	assert.InDelta(t, (101+21+101)/3.0, res.MeanRankEndUS(), 1e-9)
	assert.Less(t, res.MeanRankEndUS(), res.TotalUS)
}

// leader on the GPU testbed (2 nodes x 2 ranks x 2 rails): rank 0 sends
// the result to the other node over one rail while its node-mate gets it
// over NVLink at once, so the ranks finish far apart. The slowest rank's
// end is TotalUS, with and without lanes, and the mean is the mean of the
// per-rank ends.
func TestRankEndsLeaderOnTestbed(t *testing.T) {
	spec := sched.Spec{Collective: coll.Allgather, Algorithm: "leader", Topo: testbed22(t, true), Bytes: 4 << 20, DtypeBytes: 4}
	res, _, err := Run(spec, Options{})
	require.NoError(t, err)
	require.Len(t, res.RankEndUS, 4)
	assert.Equal(t, res.TotalUS, slices.Max(res.RankEndUS))
	sum := 0.0
	for _, e := range res.RankEndUS {
		sum += e
	}
	assert.InDelta(t, sum/4, res.MeanRankEndUS(), 1e-9*res.TotalUS)
	assert.Less(t, res.MeanRankEndUS(), 0.9*res.TotalUS, "ends %v", res.RankEndUS)

	spec.Topo = testbed22(t, false)
	lanes, err := RunLanes(spec, 2, Options{LanesOnRails: true, WorkerGBps: topo.TestbedCopyGBps})
	require.NoError(t, err)
	require.Len(t, lanes.RankEndUS, 4, "one end per rank, over all its lanes")
	assert.Equal(t, lanes.TotalUS, slices.Max(lanes.RankEndUS))
	assert.Less(t, lanes.MeanRankEndUS(), lanes.TotalUS)
}
