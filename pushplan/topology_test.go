package pushplan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/sched"
)

// Every node of a topology gets its planner; a rank plans with its own
// node's, and nil Planners (no calibration) plan nothing.
func TestTopologyPlanners(t *testing.T) {
	cal, tp := twoH200Nodes(t)
	ps, err := TopologyPlanners(tp, cal, "", 64<<20)
	require.NoError(t, err)
	p := ps.ForRank(2) // node 1, GPU 0
	require.NotNil(t, p)
	assert.NotNil(t, p(3, 256<<20, sched.Path{}), "the idle pair of its node splits")
	assert.Nil(t, p(0, 256<<20, sched.Path{}), "a peer on another node")
	assert.Nil(t, ps.ForRank(99), "a rank the topology does not place")
	var none *Planners
	assert.Nil(t, none.ForRank(0))

	_, err = TopologyPlanners(tp, cal, "NVIDIA H100 80GB HBM3", 64<<20)
	assert.Error(t, err, "the file is of H200s")
}
