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

// Every (count, algorithm) is a row, a count's algorithms side by side,
// and the document takes the routing's token size.
func TestPredictMoEs(t *testing.T) {
	tp := topo.SweepShape(2, 3)
	algs, fallback, err := MoEAlgorithms(coll.Dispatch, "all", tp)
	require.NoError(t, err)
	assert.Empty(t, fallback)
	require.NotEmpty(t, algs)
	specOf := func(alg string, tokens int) (sched.Spec, error) {
		r, err := moe.Generate(moe.Options{NRanks: 6, TokensPerRank: tokens, TokenBytes: 64, TopK: 2, Experts: 12, Seed: 1})
		return sched.Spec{Collective: coll.Dispatch, Algorithm: alg, Topo: tp, DtypeBytes: 1, Routing: r}, err
	}
	doc := &MoEDoc{}
	require.NoError(t, doc.PredictMoEs([]int{3, 7}, algs, fallback, tp, sim.Options{}, specOf))
	require.Len(t, doc.Results, 2*len(algs))
	assert.Equal(t, int64(64), doc.TokenBytes)
	assert.Equal(t, algs[0], doc.Results[0].Algorithm)
	assert.Equal(t, 7, doc.Results[len(algs)].TokensPerRank)
}

// --alg for dispatch and combine: auto is one choice, a name must be
// registered.
func TestMoEAlgorithms(t *testing.T) {
	tp := topo.SweepShape(2, 3)
	algs, _, err := MoEAlgorithms(coll.Dispatch, "auto", tp)
	require.NoError(t, err)
	assert.Len(t, algs, 1)
	algs, _, err = MoEAlgorithms(coll.Combine, "multiwrite", tp)
	require.NoError(t, err)
	assert.Equal(t, []string{"multiwrite"}, algs)
	_, _, err = MoEAlgorithms(coll.Dispatch, "nope", tp)
	assert.Error(t, err)
}
