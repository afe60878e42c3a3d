package team

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
	"github.com/goring-hpc/goring/ucx"
)

// A team given a topology (SetTopology: goring bench's emulated nodes)
// plans on it instead of the one its hosts make: four ranks of this host
// as two nodes of two run the lane allreduce of that shape, its transfers
// in the pieces the call asks for (Args.Chunks), contents checked. A
// topology of the wrong size, or one given after connecting, is refused;
// the team's transport is there once it has connected.
func TestSetTopologyPlansOnIt(t *testing.T) {
	if err := ucx.Load(); err != nil {
		t.Skipf("UCX not loadable: %v", err)
	}
	const n, count = 4, 1000
	tp, err := topo.Synthetic("emulated-2x2", 2, 2, 1)
	require.NoError(t, err)
	ctx, err := NewContext("", testTable{})
	require.NoError(t, err)
	teams := make([]*Team, n)
	slot := 0
	for r := range teams {
		teams[r], err = NewTeam(ctx, r, n)
		require.NoError(t, err)
		wrong, err := topo.Synthetic("three", 1, 3, 1)
		require.NoError(t, err)
		assert.Error(t, teams[r].SetTopology(wrong), "a topology of 3 ranks for a team of 4")
		require.NoError(t, teams[r].SetTopology(tp))
		assert.Nil(t, teams[r].Transport(), "no transport before connecting")
		slot = max(slot, len(teams[r].card))
	}
	cards := make([]byte, n*slot)
	for r, tm := range teams {
		copy(cards[r*slot:], tm.card)
	}
	for r, tm := range teams {
		require.NoError(t, tm.Connect(cards, slot), "rank %d", r)
	}
	t.Cleanup(func() {
		for _, tm := range teams {
			assert.NoError(t, tm.Destroy())
		}
		assert.NoError(t, ctx.Close())
	})
	args := make([]Args, n)
	dsts := make([][]byte, n)
	for r := range args {
		src := cbuf(t, 4*count)
		in := f32s(src)
		for i := range in {
			in[i] = float32(r + i%7)
		}
		dsts[r] = cbuf(t, 4*count)
		args[r] = Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(dsts[r]), Count: count, Dtype: coll.Float32, Op: coll.Sum, Alg: "lane", Chunks: 4}
	}
	algs := runAll(t, teams, args)
	for r := range teams {
		assert.Equal(t, "lane", algs[r])
		assert.Same(t, tp, teams[r].topo, "rank %d plans on the given topology", r)
		assert.NotNil(t, teams[r].Transport())
		assert.Error(t, teams[r].SetTopology(tp), "rank %d: a topology after connecting", r)
		chunked := false
		for k := range teams[r].plans.plans {
			chunked = chunked || k.chunks == 4
		}
		assert.True(t, chunked, "rank %d: the plan's transfers in the call's pieces", r)
		for i, f := range f32s(dsts[r]) {
			require.Equal(t, float32(0+1+2+3+4*(i%7)), f, "rank %d element %d", r, i)
		}
	}
}
