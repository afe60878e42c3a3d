package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/coll"
)

// Which jobs run through the team layer: everything but the namespace
// testbed and dispatch or combine on device memory (the team context's
// options for a job: bench.TeamOptions).
func TestBenchThroughTeam(t *testing.T) {
	job := func(c coll.Collective) *benchJob { return &benchJob{cfg: bench.Config{Collective: c}} }
	assert.True(t, benchThroughTeam(&benchFlags{mem: "host"}, job(coll.Allreduce)))
	assert.True(t, benchThroughTeam(&benchFlags{mem: "cuda"}, job(coll.Allreduce)))
	assert.True(t, benchThroughTeam(&benchFlags{mem: "host"}, job(coll.Dispatch)))
	assert.False(t, benchThroughTeam(&benchFlags{mem: "cuda"}, job(coll.Combine)), "dispatch and combine on device memory")
	assert.False(t, benchThroughTeam(&benchFlags{mem: "host", netns: netnsFlags{prefix: "gr"}}, job(coll.Allreduce)), "the testbed")
}
