package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/fakedev"
	"github.com/goring-hpc/goring/exec/memtransport"
	"github.com/goring-hpc/goring/sched"
)

// The runner on device memory: every collective validated every
// iteration with buffers on two fake devices, rows marked "fake".
func TestRunValidatesInDeviceMemory(t *testing.T) {
	tp := synthTopo(t, 2)
	n := tp.NumGPUs()
	arena := fakedev.New(3)
	for i, tc := range []struct {
		c     coll.Collective
		dtype coll.Dtype
		op    coll.Op
		sizes []int64
	}{
		{coll.Allgather, coll.DtypeInvalid, coll.OpInvalid, []int64{1, 65537}},
		{coll.Allreduce, coll.Float32, coll.Sum, []int64{4, 40004}},
		{coll.ReduceScatter, coll.Int16, coll.Max, []int64{2, 1026}},
		{coll.Bcast, coll.DtypeInvalid, coll.OpInvalid, []int64{3333}},
		{coll.Alltoallv, coll.DtypeInvalid, coll.OpInvalid, []int64{7, 4096}},
	} {
		var algs []string
		for _, a := range sched.Algorithms(tc.c) {
			algs = append(algs, a.Name)
		}
		rows := runFakeDevice(t, arena, n, uint64(i), func(r int) Config {
			return Config{Rank: r, Topo: tp, Collective: tc.c, Algorithms: algs, Sizes: tc.sizes, Dtype: tc.dtype, Op: tc.op,
				Iters: 2, Warmup: 1, Validate: true, Root: 1, CallTimeout: 10 * time.Second,
				Traffic: func(b int64) ([][]int64, error) { return UniformCounts(n, b), nil },
				Memory:  fakedev.Memory{Arena: arena, Dev: r % 2}}
		})
		require.NotEmpty(t, rows, "case %d", i)
		for _, row := range rows {
			assert.True(t, row.Validated)
			assert.Equal(t, "fake", row.Mem, "case %d", i)
		}
	}
}

// runFakeDevice runs cfg(r) on every rank of n, each in its own
// goroutine over the in-memory network with the arena's memory, and
// returns rank 0's rows; any rank's error fails t.
func runFakeDevice(t *testing.T, arena *fakedev.Arena, n int, seed uint64, cfg func(r int) Config) []Row {
	t.Helper()
	net := memtransport.New(n, memtransport.Options{Seed: seed, Reorder: true, Memory: arena})
	ctrl := newChanCtrl(n)
	rows := make([][]Row, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows[r], errs[r] = Run(context.Background(), cfg(r), memT{net.Endpoint(r)}, rankCtrl{ctrl, r})
			if errs[r] != nil {
				net.Abort(errs[r])
			}
		}()
	}
	wg.Wait()
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	return rows[0]
}
