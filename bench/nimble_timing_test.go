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

// Both ways of planning are timed on a skewed demand (one hot expert), and
// the warm planner's plan comes back.
func TestTimeNimblePlanner(t *testing.T) {
	hot := moe.Options{NRanks: 8, TokensPerRank: 5, TokenBytes: 32, TopK: 2, Experts: 8, Hot: map[int]float64{0: 0.5}, Seed: 2}
	r, err := moe.Generate(hot)
	require.NoError(t, err)
	tp := topo.SweepShape(4, 2)
	spec := sched.Spec{Collective: coll.Dispatch, Algorithm: "nimble", Topo: tp, DtypeBytes: 1, Routing: r}
	warm, cold, mw, err := TimeNimblePlanner(spec)
	require.NoError(t, err)
	assert.Positive(t, warm)
	assert.Positive(t, cold)
	assert.NotNil(t, mw)
}
