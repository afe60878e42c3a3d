package nodeexec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/devsync"
)

// Which calls move their data in tagged lines: small one-shot
// allreduces, reduce_scatters and allgathers of whole 8-byte words that
// fit the LL area, up to the set bytes a rank sends a peer; the choice
// depends on the call's shape alone (every rank makes the same).
func TestLLCalls(t *testing.T) {
	const llMax = 256 << 10
	assert.Zero(t, DefaultLLMax, "LL calls are off unless set")
	pair := &Local{size: 2, slot: 64 << 20, llMax: llMax}
	assert.Equal(t, "ll_oneshot_allreduce", pair.Algorithm(Call{Collective: collAllreduce, Dtype: f32, Op: sum, Count: 4096}))
	assert.Equal(t, "ll_oneshot_allreduce", pair.Algorithm(Call{Collective: collAllreduce, Dtype: f32, Op: sum, Count: llMax / 4}))
	assert.Equal(t, "oneshot_allreduce", pair.Algorithm(Call{Collective: collAllreduce, Dtype: f32, Op: sum, Count: llMax/4 + 2}), "beyond the LL maximum")
	assert.Equal(t, "oneshot_allreduce", pair.Algorithm(Call{Collective: collAllreduce, Dtype: f32, Op: sum, Count: 4095}), "half a word at the end")
	assert.Equal(t, "ll_reduce_scatter", pair.Algorithm(Call{Collective: collReduceScatter, Dtype: f32, Op: sum, Count: 4096}))
	assert.Equal(t, "ll_allgather", pair.Algorithm(Call{Collective: collAllgather, Dtype: f32, Count: 4096}))
	assert.Equal(t, "bcast", pair.Algorithm(Call{Collective: collBcast, Dtype: f32, Count: 4096}), "no LL bcast")
	assert.Equal(t, "oneshot_allreduce", pair.Algorithm(Call{Collective: collAllreduce, Dtype: f32, Op: sum, Count: 0}), "no data, no LL")
	eight := &Local{size: 8, slot: 64 << 20, llMax: llMax}
	assert.Equal(t, "ll_allgather", eight.Algorithm(Call{Collective: collAllgather, Dtype: f32, Count: 32 << 10}), "8 ranks of 128 KiB: 2 MiB of lines")
	assert.Equal(t, "allgather", eight.Algorithm(Call{Collective: collAllgather, Dtype: f32, Count: 32<<10 + 2}), "beyond the LL area")
	pair.SetLLMax(0)
	assert.Equal(t, "oneshot_allreduce", pair.Algorithm(Call{Collective: collAllreduce, Dtype: f32, Op: sum, Count: 4096}), "LL off")
	// A piece of a reduce_scatter whose blocks lie off 8-byte words.
	odd := &Local{size: 2, slot: 64 << 20, llMax: llMax}
	s, _, err := odd.shape(Call{Collective: collReduceScatter, Dtype: f32, Op: sum, Count: 4096, Stride: 4097})
	require.NoError(t, err)
	assert.Equal(t, devsync.ReduceScatter, s.Alg)
}

// Calls across the epochs before which a rank clears its LL area
// (devsync.LLClearBefore, 2^30 and 2^30+1) stay right, handed to a
// resident kernel or launched after the clear.
func TestLLClearsKeepCallsRight(t *testing.T) {
	ls := pairInProcess(t, 1<<20)
	const count = 4096
	var in, out [2]*cuda.Buffer
	for r, l := range ls {
		l.SetLLMax(count * 4)
		l.epoch = 1<<30 - 4 // as both ranks would be after that many calls
		var err error
		in[r], err = l.dev.Alloc(4 * count)
		require.NoError(t, err)
		out[r], err = l.dev.Alloc(4 * count)
		require.NoError(t, err)
		t.Cleanup(func() { in[r].Free(); out[r].Free() })
	}
	for i := range 8 {
		var cs [2]Call
		for r := range ls {
			v := make([]float32, count)
			for j := range v {
				v[j] = float32((r+1)*(j%101) + i)
			}
			require.NoError(t, in[r].CopyFromHost(0, f32bytes(v)))
			cs[r] = Call{Collective: collAllreduce, Dtype: f32, Op: sum, Count: count, In: in[r].Ptr(), Out: out[r].Ptr()}
		}
		require.Equal(t, "ll_oneshot_allreduce", ls[0].Algorithm(cs[0]))
		runPair(t, ls, cs)
		for r := range ls {
			got := make([]byte, 4*count)
			require.NoError(t, out[r].CopyToHost(got, 0))
			for j, x := range f32s(got) {
				if want := float32(j%101+i) + float32(2*(j%101)+i); x != want {
					t.Fatalf("call %d (epoch %d), rank %d, element %d: %v, want %v", i, ls[r].epoch, r, j, x, want)
				}
			}
		}
	}
}
