package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/memtransport"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chanCtrl is an in-process control plane: an allgather over a mutex.
type chanCtrl struct {
	mu    sync.Mutex
	cond  *sync.Cond
	n     int
	round map[int]*gatherRound
	next  []int
}

type gatherRound struct {
	data [][]byte
	got  int
}

func newChanCtrl(n int) *chanCtrl {
	c := &chanCtrl{n: n, round: map[int]*gatherRound{}, next: make([]int, n)}
	c.cond = sync.NewCond(&c.mu)
	return c
}

type rankCtrl struct {
	c    *chanCtrl
	rank int
}

func (r rankCtrl) Allgather(ctx context.Context, data []byte) ([][]byte, error) {
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.next[r.rank]
	c.next[r.rank]++
	g := c.round[k]
	if g == nil {
		g = &gatherRound{data: make([][]byte, c.n)}
		c.round[k] = g
	}
	g.data[r.rank] = append([]byte{}, data...)
	g.got++
	c.cond.Broadcast()
	for g.got < c.n {
		c.cond.Wait()
	}
	return g.data, nil
}

type memT struct{ *memtransport.Endpoint }

func (memT) NextCall() {}

// runInProcess runs cfg on n in-process ranks over the in-memory transport.
func runInProcess(t *testing.T, n int, cfg Config) []Row {
	t.Helper()
	net := memtransport.New(n, memtransport.Options{Seed: 1, Reorder: true})
	ctrl := newChanCtrl(n)
	rows := make([][]Row, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			c := cfg
			c.Rank = r
			rows[r], errs[r] = Run(context.Background(), c, memT{net.Endpoint(r)}, rankCtrl{ctrl, r})
			if errs[r] != nil {
				net.Abort(errs[r])
			}
		}(r)
	}
	wg.Wait()
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	return rows[0]
}

func synthTopo(t *testing.T, nodes int) *topo.Topology {
	t.Helper()
	tp, err := topo.Preset("h200x2")
	require.NoError(t, err)
	tp, err = tp.Repeat(nodes)
	require.NoError(t, err)
	return tp
}

func TestRunValidatesOverMemTransport(t *testing.T) {
	tp := synthTopo(t, 2)
	cases := []struct {
		c     coll.Collective
		dtype coll.Dtype
		op    coll.Op
		sizes []int64
	}{
		{coll.Allgather, coll.DtypeInvalid, coll.OpInvalid, []int64{1, 1000, 65537}},
		{coll.Allreduce, coll.Float16, coll.Sum, []int64{2, 4096, 20002}},
		{coll.Allreduce, coll.Int32, coll.Bxor, []int64{4, 4000}},
		{coll.ReduceScatter, coll.Bfloat16, coll.Prod, []int64{2, 1026}},
		{coll.Bcast, coll.DtypeInvalid, coll.OpInvalid, []int64{1, 3333}},
		{coll.Alltoallv, coll.DtypeInvalid, coll.OpInvalid, []int64{0, 7, 4096}},
	}
	for i, tc := range cases {
		var algs []string
		for _, a := range sched.Algorithms(tc.c) {
			algs = append(algs, a.Name)
		}
		if len(algs) == 0 {
			t.Logf("case %d: no %s algorithm registered yet", i, tc.c)
			continue
		}
		var got []Row
		cfg := Config{Topo: tp, Collective: tc.c, Algorithms: algs, Sizes: tc.sizes, Dtype: tc.dtype, Op: tc.op,
			Iters: 3, Warmup: 1, Validate: true, Root: 1, CallTimeout: 10 * time.Second,
			Traffic: func(b int64) ([][]int64, error) { return UniformCounts(tp.NumGPUs(), b), nil },
			OnRow:   func(r Row) { got = append(got, r) }}
		rows := runInProcess(t, tp.NumGPUs(), cfg)
		assert.Equal(t, rows, got, "case %d", i)
		for _, r := range rows {
			assert.True(t, r.Validated, "case %d", i)
			assert.Equal(t, 3, r.Iterations, "case %d", i)
			assert.GreaterOrEqual(t, r.MaxUS, r.AvgUS, "case %d", i)
			assert.LessOrEqual(t, r.MinUS, r.AvgUS, "case %d", i)
		}
		t.Logf("case %d: %s: %d rows over %v", i, tc.c, len(rows), algs)
	}
}

func TestUniformAndHotCounts(t *testing.T) {
	u := UniformCounts(3, 10)
	assert.Equal(t, [][]int64{{10, 10, 10}, {10, 10, 10}, {10, 10, 10}}, u)
	h, err := HotCounts(4, 100, 2, 0.5)
	require.NoError(t, err)
	for i := range h {
		var s int64
		for _, v := range h[i] {
			s += v
		}
		assert.Equal(t, int64(100*4), s, "row %d keeps its total", i)
		assert.Equal(t, int64(200), h[i][2], "row %d: half of it to the hot rank", i)
	}
	_, err = HotCounts(4, 100, 7, 0.5)
	assert.Error(t, err)
	r1 := RandomCounts(5, 1000, 42)
	r2 := RandomCounts(5, 1000, 42)
	assert.Equal(t, r1, r2, "seeded counts are reproducible")
	zeros := 0
	for i := range r1 {
		for _, v := range r1[i] {
			assert.True(t, v >= 0 && v <= 2000, fmt.Sprint(v))
			if v == 0 {
				zeros++
			}
		}
	}
	assert.Positive(t, zeros, "random counts include zeros")
}

func TestParseCounts(t *testing.T) {
	m, err := ParseCounts([]byte(`[[0,1],[2,3]]`), 2)
	require.NoError(t, err)
	assert.Equal(t, [][]int64{{0, 1}, {2, 3}}, m)
	bad := []struct{ in, want string }{
		{`[[0,1]]`, "1 rows, want 2"},
		{`[[0,1],[2]]`, "row 1 has 1 entries"},
		{`[[0,-1],[2,3]]`, "negative"},
		{`[[0,1],[2,3]] x`, "trailing"},
		{`{"a":1}`, "counts JSON"},
	}
	for i, c := range bad {
		_, err := ParseCounts([]byte(c.in), 2)
		require.Error(t, err, "case %d", i)
		assert.Contains(t, err.Error(), c.want, "case %d", i)
	}
}

// Rank 0 hears where the run stands when each size starts and after every
// iteration: algorithm, point and iteration, each of its count.
func TestRunReportsProgress(t *testing.T) {
	tp := synthTopo(t, 2)
	var got []Progress
	cfg := Config{Topo: tp, Collective: coll.Allgather, Algorithms: []string{"ring", "neighbor"}, Sizes: []int64{1, 1000},
		Iters: 2, Warmup: 1, CallTimeout: 10 * time.Second,
		OnIteration: func(p Progress) { got = append(got, p) }}
	runInProcess(t, tp.NumGPUs(), cfg)
	var want []Progress
	for a, alg := range cfg.Algorithms {
		for s, size := range cfg.Sizes {
			for it := 0; it <= 3; it++ {
				want = append(want, Progress{Algorithm: alg, Alg: a + 1, Algs: 2, Bytes: size, Point: s + 1, Points: 2, Iter: it, Iters: 3, Warmup: 1})
			}
		}
	}
	assert.Equal(t, want, got)
}
