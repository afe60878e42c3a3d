package bench

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/memtransport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runLanesInProcess runs cfg on n in-process ranks with w lanes, each lane
// its own in-memory network; wrap may replace a rank's lane transport.
func runLanesInProcess(n, w int, cfg Config, wrap func(rank, lane int, t Transport) Transport) ([][]Row, []error) {
	nets := make([]*memtransport.Network, w)
	for i := range nets {
		nets[i] = memtransport.New(n, memtransport.Options{Seed: uint64(i + 1), Reorder: true})
	}
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
			ts := make([]Transport, w)
			for i := range ts {
				ts[i] = memT{nets[i].Endpoint(r)}
				if wrap != nil {
					ts[i] = wrap(r, i, ts[i])
				}
			}
			rows[r], errs[r] = RunLanes(context.Background(), c, ts, rankCtrl{ctrl, r})
		}(r)
	}
	wg.Wait()
	return rows, errs
}

// TestRunLanesValidates measures allgather, reduce_scatter, allreduce and
// bcast (from rank 2) on 1, 2, 3, 4 and 8 lanes at sizes whose lane parts are unequal, with
// --validate's check of every iteration's output.
func TestRunLanesValidates(t *testing.T) {
	tp := synthTopo(t, 2) // 4 ranks on 2 nodes: the lane allreduce applies
	lanes := []int{1, 2, 3, 4, 8}
	cases := []struct {
		c     coll.Collective
		dtype coll.Dtype
		algs  []string
		sizes []int64
	}{
		{coll.Allgather, coll.DtypeInvalid, []string{"ring", "recursive_doubling", "bruck", "parallel_rings"}, []int64{5, 1001, 65537}},
		{coll.ReduceScatter, coll.Float32, []string{"ring", "parallel_rings"}, []int64{4, 4 * 251}},
		{coll.Allreduce, coll.Float32, []string{"ring", "lane", "rabenseifner", "recursive_doubling"}, []int64{4 * 3, 4 * 1001, 4 * 16411}},
		{coll.Bcast, coll.DtypeInvalid, []string{"knomial"}, []int64{7, 1001}},
	}
	for _, tc := range cases {
		cfg := Config{Topo: tp, Collective: tc.c, Algorithms: tc.algs, Sizes: tc.sizes, Dtype: tc.dtype, Op: coll.Sum,
			Iters: 2, Warmup: 1, Validate: true, Root: 2, CallTimeout: 10 * time.Second, Lanes: lanes}
		rows, errs := runLanesInProcess(4, 8, cfg, nil)
		for r, err := range errs {
			require.NoError(t, err, "%s rank %d", tc.c, r)
		}
		seen := map[int]int{}
		for _, row := range rows[0] {
			assert.True(t, row.Validated)
			seen[row.Lanes]++
		}
		for _, w := range lanes {
			assert.Equal(t, len(tc.algs)*len(tc.sizes), seen[w], "%s: every algorithm and size on %d lanes", tc.c, w)
		}
	}
}

// brokenLane fails its receives after the first call (so the run gets
// past its warm-up into a failing iteration).
type brokenLane struct {
	Transport
	calls int
}

var errBrokenLane = errors.New("lane broken on purpose")

func (b *brokenLane) NextCall() { b.calls++; b.Transport.NextCall() }
func (b *brokenLane) PostRecv(p *exec.Post) error {
	if b.calls > 2 {
		return errBrokenLane
	}
	return b.Transport.PostRecv(p)
}

// TestRunLanesErrorNamesLane breaks lane 1 of rank 2: every rank's run
// fails, naming lane 1.
func TestRunLanesErrorNamesLane(t *testing.T) {
	tp := synthTopo(t, 2)
	cfg := Config{Topo: tp, Collective: coll.Allreduce, Algorithms: []string{"ring"}, Sizes: []int64{4 * 1001}, Dtype: coll.Float32, Op: coll.Sum,
		Iters: 3, Warmup: 1, Validate: true, CallTimeout: 500 * time.Millisecond, Lanes: []int{3}}
	_, errs := runLanesInProcess(4, 3, cfg, func(rank, lane int, t Transport) Transport {
		if rank == 2 && lane == 1 {
			return &brokenLane{Transport: t}
		}
		return t
	})
	for r, err := range errs {
		require.Error(t, err, "rank %d", r)
		assert.Contains(t, err.Error(), "lane 1:", "rank %d", r)
	}
	assert.ErrorIs(t, errs[2], errBrokenLane)
}

func TestLaneRowsInTableAndCSV(t *testing.T) {
	b, c := &strings.Builder{}, &strings.Builder{}
	tw := &TableWriter{W: b}
	require.NoError(t, tw.Row(Row{Collective: "allreduce", Algorithm: "ring", Bytes: 8, Lanes: 1}))
	require.NoError(t, tw.Row(Row{Collective: "allreduce", Algorithm: "ring", Bytes: 8, Lanes: 4}))
	assert.Contains(t, b.String(), "algorithm ring, lanes 1")
	assert.Contains(t, b.String(), "algorithm ring, lanes 4")
	require.NoError(t, WriteCSV(c, []Row{{Collective: "allreduce", Algorithm: "ring", Bytes: 8, Lanes: 4}}))
	assert.Contains(t, c.String(), "validated,lanes\n")
	c.Reset()
	require.NoError(t, WriteCSV(c, []Row{{Collective: "allreduce", Algorithm: "ring", Bytes: 8}}))
	assert.NotContains(t, c.String(), "lanes", "one lane: the CSV of before lanes")
}
