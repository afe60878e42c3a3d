package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

func repeated(t *testing.T, preset string, nodes int) *topo.Topology {
	t.Helper()
	one, err := topo.Preset(preset)
	require.NoError(t, err)
	tp, err := one.Repeat(nodes)
	require.NoError(t, err)
	return tp
}

// The facts docs/reproductions.md ("MoE dispatch") rests on, at its
// smallest batch: on two dgx-h100 nodes, MultiWrite section 6.3's 16
// ranks, 64 experts, top-8 and 7168-byte tokens, the same-index relay
// carries about a third of unicast's bytes across and is predicted
// faster; nimble without a hot expert splits nothing and is unicast.
func TestMoEDispatchRelayPays(t *testing.T) {
	tp := repeated(t, "dgx-h100", 2)
	r, err := moe.Generate(moe.Options{NRanks: 16, TokensPerRank: 64, TokenBytes: 7168, TopK: 8, Experts: 64})
	require.NoError(t, err)
	us := map[string]float64{}
	inter := map[string]int64{}
	for _, alg := range []string{"unicast", "multiwrite", "nimble"} {
		res, plan, err := Run(sched.Spec{Collective: coll.Dispatch, Algorithm: alg, Topo: tp, DtypeBytes: 1, Routing: r}, Options{})
		require.NoError(t, err, alg)
		rep, err := sched.Verify(plan)
		require.NoError(t, err, alg)
		us[alg], inter[alg] = res.TotalUS, rep.InterNodeBytes
	}
	ratio := float64(inter["unicast"]) / float64(inter["multiwrite"])
	require.InDelta(t, 3.4, ratio, 0.3, "cross-node bytes, unicast over multiwrite")
	require.Less(t, us["multiwrite"], 0.8*us["unicast"])
	require.Equal(t, us["unicast"], us["nimble"])
}

// NIMBLE section V-D's shape (2 x 4 GPUs, 8 experts, 8 KiB tokens) with
// expert 0 at 70% of the tokens: nimble spreads the hot rank's incoming
// rows and is predicted faster than unicast for dispatch and combine.
func TestMoEHotExpertNimbleSpreads(t *testing.T) {
	tp := repeated(t, "clusterB", 2)
	r, err := moe.Generate(moe.Options{NRanks: 8, TokensPerRank: 512, TokenBytes: 8192, TopK: 2, Experts: 8, Hot: map[int]float64{0: 0.7}})
	require.NoError(t, err)
	for _, c := range []coll.Collective{coll.Dispatch, coll.Combine} {
		us := map[string]float64{}
		for _, alg := range []string{"unicast", "nimble"} {
			res, _, err := Run(sched.Spec{Collective: c, Algorithm: alg, Topo: tp, DtypeBytes: 2, Routing: r}, Options{})
			require.NoError(t, err, alg)
			us[alg] = res.TotalUS
		}
		require.Less(t, us["nimble"], us["unicast"], "%s", c)
	}
}
