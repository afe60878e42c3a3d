package nodeexec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
)

const (
	collAllreduce     = coll.Allreduce
	collAllgather     = coll.Allgather
	collReduceScatter = coll.ReduceScatter
	collBcast         = coll.Bcast
	f32               = coll.Float32
	sum               = coll.Sum
	bxor              = coll.Bxor
)

func testCards(slots []int, buses []string) [][]byte {
	out := make([][]byte, len(slots))
	for r := range slots {
		var h cuda.IPCHandle
		h[0] = byte(r + 1)
		out[r] = encodeCard(card{slot: slots[r], ipc: h, bus: buses[r]})
	}
	return out
}

// Cards round-trip, and the ranks agree only on one slot size and one GPU
// per rank: every rank reads the same cards, so every rank says the same.
func TestCardsAndAgreement(t *testing.T) {
	cs := testCards([]int{64, 64, 64}, []string{"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0"})
	c, err := decodeCard(cs[1])
	require.NoError(t, err)
	assert.Equal(t, 64, c.slot)
	assert.Equal(t, byte(2), c.ipc[0])
	assert.Equal(t, "0000:2a:00.0", c.bus)
	assert.NoError(t, Agree(cs, 3, false))
	assert.Error(t, Agree(cs, 4, false), "a card missing")
	assert.ErrorContains(t, Agree(testCards([]int{64, 32}, []string{"a", "b"}), 2, false), "slots")
	assert.ErrorContains(t, Agree(testCards([]int{64, 64}, []string{"a", "a"}), 2, false), "share the GPU")
	assert.NoError(t, Agree(testCards([]int{64, 64}, []string{"a", "a"}), 2, true), "ranks sharing a GPU, where allowed")
	_, err = decodeCard([]byte("GNX1"))
	assert.Error(t, err)
	bad := append([]byte(nil), cs[0]...)
	bad[len(bad)-len("0000:18:00.0")-2] = 200 // the bus id's length overruns
	_, err = decodeCard(bad)
	assert.Error(t, err)
}

// A call's kernel: one-shot allreduce up to oneShotMax (2 MiB, a pair's
// 32 MiB), two-shot above;
// data beyond the slot does not fit (but for the allreduce and
// reduce_scatter in pieces); a bcast's root must be a rank; undefined
// reductions are refused.
func TestShapes(t *testing.T) {
	l := &Local{size: 4, slot: 1 << 20}
	assert.Equal(t, "oneshot_allreduce", l.Algorithm(Call{Collective: collAllreduce, Dtype: f32, Op: sum, Count: 1024}))
	assert.True(t, l.Fits(Call{Collective: collAllreduce, Dtype: f32, Op: sum, Count: 1 << 18}))
	assert.True(t, l.Fits(Call{Collective: collAllreduce, Dtype: f32, Op: sum, Count: 1<<18 + 1}), "in pieces")
	assert.True(t, l.Fits(Call{Collective: collReduceScatter, Dtype: f32, Op: sum, Count: 1<<16 + 1}), "in pieces")
	assert.True(t, l.Fits(Call{Collective: collAllgather, Dtype: f32, Count: 1 << 16}), "4 ranks' blocks of 256 KiB fill the slot")
	assert.False(t, l.Fits(Call{Collective: collAllgather, Dtype: f32, Count: 1<<16 + 1}))
	assert.True(t, l.Fits(Call{Collective: collBcast, Dtype: f32, Count: 1 << 18, Root: 3}), "a bcast of 1 MiB fills the slot")
	assert.False(t, l.Fits(Call{Collective: collBcast, Dtype: f32, Count: 1<<18 + 1}), "bcasts do not run in pieces")
	assert.False(t, l.Fits(Call{Collective: collBcast, Dtype: f32, Count: 1, Root: 4}), "no rank 4")
	assert.Equal(t, "bcast", l.Algorithm(Call{Collective: collBcast, Dtype: f32, Count: 1}))
	big := &Local{size: 4, slot: 64 << 20}
	assert.Equal(t, "oneshot_allreduce", big.Algorithm(Call{Collective: collAllreduce, Dtype: f32, Op: sum, Count: 512 << 10}), "2 MiB on 4 ranks")
	assert.Equal(t, "twoshot_allreduce", big.Algorithm(Call{Collective: collAllreduce, Dtype: f32, Op: sum, Count: 512<<10 + 1}))
	assert.Equal(t, "", big.Algorithm(Call{Collective: collAllreduce, Dtype: f32, Op: bxor, Count: 4}))
	pair := &Local{size: 2, slot: 64 << 20}
	assert.Equal(t, "oneshot_allreduce", pair.Algorithm(Call{Collective: collAllreduce, Dtype: f32, Op: sum, Count: 8 << 20}), "32 MiB on a pair")
	assert.Equal(t, "twoshot_allreduce", pair.Algorithm(Call{Collective: collAllreduce, Dtype: f32, Op: sum, Count: 8<<20 + 1}))
	small := &Local{size: 2, slot: 16 << 20}
	assert.Equal(t, "oneshot_allreduce", small.Algorithm(Call{Collective: collAllreduce, Dtype: f32, Op: sum, Count: 12 << 20}),
		"48 MiB in 16 MiB slots: pieces, each one-shot")
}
