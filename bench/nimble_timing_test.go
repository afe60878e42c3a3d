package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// Both ways of planning are timed, and the warm planner's plan comes back.
func TestTimeNimblePlanner(t *testing.T) {
	r, err := moe.Generate(moe.Options{NRanks: 6, TokensPerRank: 7, TokenBytes: 64, TopK: 2, Experts: 12, Seed: 1})
	require.NoError(t, err)
	spec := sched.Spec{Collective: coll.Dispatch, Algorithm: "nimble", Topo: topo.SweepShape(2, 3), DtypeBytes: 1, Routing: r}
	warm, cold, mw, err := TimeNimblePlanner(spec)
	require.NoError(t, err)
	assert.Positive(t, warm)
	assert.Positive(t, cold)
	assert.NotNil(t, mw)
}
