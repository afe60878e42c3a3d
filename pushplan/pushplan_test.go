package pushplan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// The 2xH200 calibration on two h200x2 nodes: a rank's planner splits to
// the other GPU of its node, never to the other node, and a node of
// another GPU model is refused.
func TestNodeAndRankPlanners(t *testing.T) {
	cal, tp := twoH200Nodes(t)

	pl, err := NodePlanner(tp.Nodes[1], cal, "NVIDIA H200", 64<<20)
	require.NoError(t, err)
	p := ForRank(tp, 2, pl) // node 1, GPU 0
	require.NotNil(t, p)
	assert.NotNil(t, p(3, 256<<20, sched.Path{}), "the idle pair of its node splits")
	assert.Nil(t, p(0, 256<<20, sched.Path{}), "a peer on another node")
	assert.Nil(t, p(3, 256<<20, sched.Path{Kind: sched.PathDirect}))
	assert.Nil(t, ForRank(tp, 99, pl), "a rank the topology does not place")
	assert.Nil(t, ForRank(tp, 2, nil))

	_, err = NodePlanner(tp.Nodes[0], cal, "NVIDIA H100 80GB HBM3", 64<<20)
	require.Error(t, err, "the file is of H200s")
	assert.Equal(t, "H200", tp.Nodes[0].GPUs[0].Model, "the caller's node is not modified")
}

// twoH200Nodes is the 2xH200 calibration and two h200x2 nodes.
func twoH200Nodes(t *testing.T) (*calib.Calibration, *topo.Topology) {
	t.Helper()
	cal, err := calib.ReadFile("../calib/testdata/calibration_h200x2.json")
	require.NoError(t, err)
	one, err := topo.Preset("h200x2")
	require.NoError(t, err)
	tp, err := one.Repeat(2)
	require.NoError(t, err)
	return cal, tp
}
