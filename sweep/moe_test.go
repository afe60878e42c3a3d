package sweep

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/topo"
)

// A dispatch row: the simulator's time, the bytes crossing nodes, the
// busiest rail port.
func TestPredictMoE(t *testing.T) {
	r, err := moe.Generate(moe.Options{NRanks: 6, TokensPerRank: 7, TokenBytes: 64, TopK: 2, Experts: 12, Seed: 1})
	require.NoError(t, err)
	tp := topo.SweepShape(2, 3)
	spec := sched.Spec{Collective: coll.Dispatch, Algorithm: "multiwrite", Topo: tp, DtypeBytes: 1, Routing: r}
	row, err := PredictMoE(spec, "", tp, sim.Options{}, 7)
	require.NoError(t, err)
	require.NotNil(t, row.PredictedUS, row.Error)
	assert.Positive(t, *row.PredictedUS)
	assert.Positive(t, row.InterNodeBytes)
	assert.Contains(t, row.BusiestRail, "rail")
	assert.Equal(t, 7, row.TokensPerRank)
}
