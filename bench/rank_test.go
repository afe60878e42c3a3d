package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
)

// Which jobs run through the team layer: everything but the namespace
// testbed and dispatch or combine on device memory.
func TestThroughTeam(t *testing.T) {
	assert.True(t, ThroughTeam(coll.Allreduce, false, false))
	assert.True(t, ThroughTeam(coll.Allreduce, false, true))
	assert.True(t, ThroughTeam(coll.Dispatch, false, false))
	assert.False(t, ThroughTeam(coll.Combine, false, true), "dispatch and combine on device memory")
	assert.False(t, ThroughTeam(coll.Allreduce, true, false), "the testbed")
}

// A rank opens as many lanes as the largest count it compares; none
// given is one lane.
func TestMaxLanes(t *testing.T) {
	assert.Equal(t, 1, MaxLanes(nil))
	assert.Equal(t, 4, MaxLanes([]int{1, 4, 2}))
}
