package nodeexec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/devsync"
)

// An allreduce too large for one slot runs as pieces that tile its vector
// in order, each one's kernel regions fitting the slot; a slot without
// room for one vector per rank takes none.
func TestAllreducePiecesTileTheVectorAndFit(t *testing.T) {
	for _, c := range []struct {
		ranks, slot, count int
		dt                 coll.Dtype
	}{
		{4, 64 << 20, 64<<20 + 1, coll.Float32},
		{4, 1 << 20, 1000003, coll.Float64},
		{3, 4096, 100000, coll.Uint8},
		{8, 1 << 16, 1 << 20, coll.Bfloat16},
		{2, 1 << 20, 5, coll.Float32}, // fits whole: one piece
	} {
		l := &Local{size: c.ranks, slot: c.slot}
		call := Call{Collective: coll.Allreduce, Dtype: c.dt, Op: coll.Sum, Count: c.count, In: 0x10000, Out: 0x900000000}
		require.True(t, l.Fits(call), "%+v", c)
		ps := l.allreducePieces(call)
		require.NotEmpty(t, ps, "%+v", c)
		next := 0
		for i, p := range ps {
			esz := cuda.DevicePtr(c.dt.Size())
			assert.Equal(t, call.In+cuda.DevicePtr(next)*esz, p.In, "%+v piece %d", c, i)
			assert.Equal(t, call.Out+cuda.DevicePtr(next)*esz, p.Out, "%+v piece %d", c, i)
			s, _, err := l.shape(p)
			require.NoError(t, err)
			assert.LessOrEqual(t, s.SlotBytes(), c.slot, "%+v piece %d of %d elements", c, i, p.Count)
			next += p.Count
		}
		assert.Equal(t, c.count, next, "%+v", c)
	}
	small := &Local{size: 8, slot: 64}
	call := Call{Collective: coll.Allreduce, Dtype: coll.Float32, Op: coll.Sum, Count: 1000}
	assert.Nil(t, small.allreducePieces(call))
	assert.False(t, small.Fits(call))
	assert.Equal(t, 8*devsync.Align, 128)
}
