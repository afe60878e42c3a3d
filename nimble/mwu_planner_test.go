package nimble

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/topo"
)

// A Planner reused over different demand matrices gives each the plan
// PlanMWU gives it from scratch: its cached network and paths carry no
// state from one plan to the next.
func TestPlannerReuseMatchesPlanMWU(t *testing.T) {
	one, err := topo.Preset("clusterB")
	require.NoError(t, err)
	tp, err := one.Repeat(2)
	require.NoError(t, err)
	pl, err := NewPlanner(tp)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(5, 5))
	n := tp.NumGPUs()
	for round := 0; round < 6; round++ {
		d := make([][]int64, n)
		hot := rng.IntN(n)
		for i := range d {
			d[i] = make([]int64, n)
			for j := range d[i] {
				if rng.IntN(3) != 0 {
					d[i][j] = int64(rng.IntN(1 << 20))
				}
				if j == hot {
					d[i][j] += 4 << 20
				}
			}
		}
		got, err := pl.Plan(d, MWUOptions{})
		require.NoError(t, err)
		want, err := PlanMWU(tp, d, MWUOptions{})
		require.NoError(t, err)
		require.Equal(t, len(want.Demands), len(got.Demands), "round %d", round)
		split := 0
		for i := range want.Demands {
			require.Equal(t, want.Demands[i].SplitBytes, got.Demands[i].SplitBytes, "round %d demand %d", round, i)
			if got.Demands[i].Split() {
				split++
			}
		}
		require.Positive(t, split, "round %d: the hot destination's demands split", round)
		require.Equal(t, want.MaxAfterUS, got.MaxAfterUS)
	}
}
