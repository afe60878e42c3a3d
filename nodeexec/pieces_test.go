package nodeexec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
)

// A call too large for one slot runs as pieces that tile it in order,
// each one's kernel fitting the slot: an allreduce's vector, a
// reduce_scatter's output block (every piece reading the same range of
// every input block, the whole call's block count apart). A slot without
// room for a vector per rank takes none.
func TestPiecesTileTheCallAndFit(t *testing.T) {
	for _, c := range []struct {
		coll               coll.Collective
		ranks, slot, count int
		dt                 coll.Dtype
	}{
		{coll.Allreduce, 4, 64 << 20, 64<<20 + 1, coll.Float32},
		{coll.Allreduce, 4, 1 << 20, 1000003, coll.Float64},
		{coll.Allreduce, 3, 4096, 100000, coll.Uint8},
		{coll.Allreduce, 8, 1 << 16, 1 << 20, coll.Bfloat16},
		{coll.Allreduce, 2, 1 << 20, 5, coll.Float32}, // fits whole: one piece
		{coll.ReduceScatter, 4, 64 << 20, 16<<20 + 3, coll.Float32},
		{coll.ReduceScatter, 3, 4096, 10001, coll.Int32},
		{coll.ReduceScatter, 8, 1 << 16, 1 << 18, coll.Float16},
	} {
		l := &Local{size: c.ranks, slot: c.slot}
		call := Call{Collective: c.coll, Dtype: c.dt, Op: coll.Sum, Count: c.count, In: 0x10000, Out: 0x900000000}
		require.True(t, l.Fits(call), "%+v", c)
		ps := l.pieces(call)
		require.NotEmpty(t, ps, "%+v", c)
		next := 0
		for i, p := range ps {
			esz := cuda.DevicePtr(c.dt.Size())
			assert.Equal(t, call.In+cuda.DevicePtr(next)*esz, p.In, "%+v piece %d", c, i)
			assert.Equal(t, call.Out+cuda.DevicePtr(next)*esz, p.Out, "%+v piece %d", c, i)
			s, _, err := l.shape(p)
			require.NoError(t, err)
			s.Blocks = 1 // the grid is the launch's
			require.NoError(t, s.Validate())
			assert.LessOrEqual(t, s.SlotBytes(), c.slot, "%+v piece %d of %d elements", c, i, p.Count)
			if c.coll == coll.ReduceScatter {
				assert.Equal(t, c.count, s.BlockStride(), "%+v piece %d reads the whole call's blocks", c, i)
			}
			next += p.Count
		}
		assert.Equal(t, c.count, next, "%+v", c)
	}
	small := &Local{size: 8, slot: 64}
	for _, cl := range []coll.Collective{coll.Allreduce, coll.ReduceScatter} {
		call := Call{Collective: cl, Dtype: coll.Float32, Op: coll.Sum, Count: 1000}
		assert.Nil(t, small.pieces(call), "%v", cl)
		assert.False(t, small.Fits(call), "%v", cl)
	}
	ag := Call{Collective: coll.Allgather, Dtype: coll.Float32, Count: 1 << 20}
	assert.False(t, (&Local{size: 4, slot: 1 << 20}).Fits(ag), "allgather does not run in pieces")
}
