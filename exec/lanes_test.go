package exec_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/memtransport"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// laneJob is a collective on W lanes of every rank over in-memory
// networks, one per lane (as each lane has its own UCX worker).
type laneJob struct {
	ms   [][]*exec.Machine // [rank][lane]; nil: an empty lane
	ts   [][]exec.Transport
	nets []*memtransport.Network
	dst  [][]byte
}

// newLaneJob plans spec on w lanes with coll.LaneSplit and
// sched.LaneProgram, over the caller's whole buffers.
func newLaneJob(t *testing.T, spec sched.Spec, w int, d coll.Dtype, o coll.Op, inputs [][]byte) *laneJob {
	t.Helper()
	n := spec.Topo.NumGPUs()
	parts := coll.LaneSplit(spec.Collective, spec.Bytes, spec.DtypeBytes, n, w)
	j := &laneJob{ms: make([][]*exec.Machine, n), ts: make([][]exec.Transport, n), dst: make([][]byte, n)}
	for lane := 0; lane < w; lane++ {
		j.nets = append(j.nets, memtransport.New(n, memtransport.Options{Seed: uint64(lane + 1), Reorder: true}))
	}
	for r := 0; r < n; r++ {
		j.ms[r] = make([]*exec.Machine, w)
		for lane, p := range parts {
			j.ts[r] = append(j.ts[r], j.nets[lane].Endpoint(r))
			if p.Len == 0 {
				continue
			}
			ls := spec
			ls.Bytes = p.Len
			plan, err := sched.Generate(ls)
			require.NoError(t, err)
			prog, err := sched.LaneProgram(plan, r, p, spec.Bytes)
			require.NoError(t, err)
			if j.dst[r] == nil {
				j.dst[r] = bytes.Repeat([]byte{0xA5}, int(prog.Sizes.Dst))
			}
			m, err := exec.New(prog, exec.HostBuffers(inputs[r], j.dst[r], nil), exec.ConfigFor(plan, d, o))
			require.NoError(t, err)
			j.ms[r][lane] = m
		}
	}
	return j
}

// run calls every rank's lanes at once and returns each rank's error.
func (j *laneJob) run(timeout time.Duration) []error {
	errs := make([]error, len(j.ms))
	var wg sync.WaitGroup
	for r := range j.ms {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			errs[r] = exec.RunLanes(context.Background(), j.ms[r], j.ts[r], time.Now().Add(timeout))
		}(r)
	}
	wg.Wait()
	return errs
}

// laneInputs are the ranks' src buffers: random bits for reductions of
// int32 sums (exact in any order), bytes otherwise.
func laneInputs(rng *rand.Rand, n int, srcBytes int64) [][]byte {
	in := make([][]byte, n)
	for r := range in {
		in[r] = make([]byte, srcBytes)
		for i := range in[r] {
			in[r][i] = byte(rng.Uint32())
		}
	}
	return in
}

// TestLanesMatchOneLane runs allgather, reduce_scatter and allreduce with
// every registered algorithm on W = 1, 2, 3, 4, 8 lanes at sizes whose
// parts are unequal, and compares every rank's output with the one-lane
// call's.
func TestLanesMatchOneLane(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 2))
	cases := []struct {
		c     coll.Collective
		elem  int
		sizes []int64 // UCC's per-rank count
	}{
		{coll.Allgather, 1, []int64{1, 37, 1001}},
		{coll.ReduceScatter, 4, []int64{4, 4 * 37, 4 * 251}},
		{coll.Allreduce, 4, []int64{4 * 3, 4 * 1001, 4 * 4099}},
		{coll.Bcast, 1, []int64{7, 1001}},
	}
	ran := map[string]bool{}
	for _, sh := range []shape{{2, 2}, {1, 3}, {3, 2}} {
		tp := topo.SweepShape(sh.nodes, sh.gpus)
		n := tp.NumGPUs()
		for _, tc := range cases {
			d, o := coll.Uint8, coll.OpInvalid
			if tc.c.Reduces() {
				d, o = coll.Int32, coll.Sum
			}
			for _, a := range sched.Algorithms(tc.c) {
				for _, size := range tc.sizes {
					spec := sched.Spec{Collective: tc.c, Algorithm: a.Name, Topo: tp, Bytes: size, DtypeBytes: tc.elem, Root: n - 1}
					ref, err := sched.Generate(spec)
					if sched.IsUnsupported(err) {
						continue
					}
					require.NoError(t, err)
					inputs := laneInputs(rng, n, ref.Ranks[0].Sizes.Src)
					if tc.c == coll.Bcast {
						inputs = laneInputs(rng, n, size)
					}
					want, err := memtransport.RunPlan(ref, dtypeOr(d, tc.c), o, inputs)
					require.NoError(t, err)
					for _, w := range []int{1, 2, 3, 4, 8} {
						name := fmt.Sprintf("%s/%s %dx%d %d bytes W=%d", tc.c, a.Name, sh.nodes, sh.gpus, size, w)
						if !lanesSupported(t, spec, w) {
							continue
						}
						j := newLaneJob(t, spec, w, dtypeOr(d, tc.c), o, inputs)
						for r, err := range j.run(20 * time.Second) {
							require.NoError(t, err, "%s rank %d", name, r)
						}
						for r := range want {
							require.Equal(t, want[r], j.dst[r], "%s rank %d", name, r)
						}
						ran[string(tc.c)+"/"+a.Name] = true
					}
				}
			}
		}
	}
	for _, must := range []string{"allgather/ring", "allgather/recursive_doubling", "allgather/bruck", "reduce_scatter/ring",
		"allreduce/ring", "allreduce/lane", "allreduce/rabenseifner", "bcast/knomial"} {
		assert.True(t, ran[must], "%s ran on lanes", must)
	}
	t.Logf("ran on lanes: %v", ran)
}

// dtypeOr is the dtype an executor gets: none for a moving collective.
func dtypeOr(d coll.Dtype, c coll.Collective) coll.Dtype {
	if !c.Reduces() {
		return coll.DtypeInvalid
	}
	return d
}

// lanesSupported reports whether every non-empty lane part of spec has a
// plan (an algorithm may refuse a part's size, as it may a whole size).
func lanesSupported(t *testing.T, spec sched.Spec, w int) bool {
	for _, p := range coll.LaneSplit(spec.Collective, spec.Bytes, spec.DtypeBytes, spec.Topo.NumGPUs(), w) {
		if p.Len == 0 {
			continue
		}
		ls := spec
		ls.Bytes = p.Len
		if _, err := sched.Generate(ls); sched.IsUnsupported(err) {
			return false
		} else {
			require.NoError(t, err)
		}
	}
	return true
}

// failingTransport fails every send it is asked to post.
type failingTransport struct{ exec.Transport }

var errLaneBroken = errors.New("lane broken on purpose")

func (failingTransport) PostSend(*exec.Post) error { return errLaneBroken }

// TestLaneErrorFailsEveryRank breaks lane 2 of rank 1: rank 1 fails at once
// naming lane 2 and its cause, and every other rank fails too, naming lane
// 2 (its lane 2 never hears from rank 1), while their other lanes finish
// or stop; every lane goroutine has ended when the calls return.
func TestLaneErrorFailsEveryRank(t *testing.T) {
	tp := topo.SweepShape(1, 3)
	spec := sched.Spec{Collective: coll.Allreduce, Algorithm: "ring", Topo: tp, Bytes: 4 * 999, DtypeBytes: 4}
	j := newLaneJob(t, spec, 4, coll.Int32, coll.Sum, laneInputs(rand.New(rand.NewPCG(1, 1)), 3, spec.Bytes))
	j.ts[1][2] = failingTransport{j.ts[1][2]}
	before := runtime.NumGoroutine()
	errs := j.run(300 * time.Millisecond)
	// RunLanes has joined its lanes; the network's goroutines, if any,
	// were there before. run's own rank goroutines signal their WaitGroup
	// just before they end, so on a busy machine they may still be
	// counted for a moment: give them up to 100 ms to end.
	for end := time.Now().Add(100 * time.Millisecond); runtime.NumGoroutine() > before && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "no lane goroutine outlives the call")
	for r, err := range errs {
		require.Error(t, err, "rank %d", r)
		var le *exec.LaneError
		require.ErrorAs(t, err, &le, "rank %d", r)
		assert.Equal(t, 2, le.Lane, "rank %d: %v", r, err)
		assert.Contains(t, err.Error(), "lane 2", "rank %d", r)
	}
	assert.ErrorIs(t, errs[1], errLaneBroken)
	assert.ErrorIs(t, errs[0], exec.ErrDeadline)
}

// failWatch reports a dead peer at its first check.
type failWatch struct{}

var errPeerGone = errors.New("peer gone")

func (failWatch) Check() error         { return errPeerGone }
func (failWatch) Every() time.Duration { return time.Millisecond }

// RunLanesWatched: no deadline needed when all goes well; a watch that
// finds a dead peer fails the rank's call, naming a lane.
func TestRunLanesWatched(t *testing.T) {
	tp := topo.SweepShape(2, 2)
	spec := sched.Spec{Collective: coll.Allreduce, Algorithm: "lane", Topo: tp, Bytes: 4 * 1001, DtypeBytes: 4}
	inputs := laneInputs(rand.New(rand.NewPCG(3, 3)), 4, spec.Bytes)
	ref, err := sched.Generate(spec)
	require.NoError(t, err)
	want, err := memtransport.RunPlan(ref, coll.Int32, coll.Sum, inputs)
	require.NoError(t, err)
	run := func(j *laneJob, ranks int, deadline func() time.Time, watch func(r int) exec.Watch) []error {
		errs := make([]error, ranks)
		var wg sync.WaitGroup
		for r := range ranks {
			wg.Add(1)
			go func(r int) {
				defer wg.Done()
				errs[r] = exec.RunLanesWatched(context.Background(), j.ms[r], j.ts[r], deadline(), watch(r))
			}(r)
		}
		wg.Wait()
		return errs
	}
	j := newLaneJob(t, spec, 3, coll.Int32, coll.Sum, inputs)
	for r, err := range run(j, 4, func() time.Time { return time.Time{} }, func(int) exec.Watch { return nil }) {
		require.NoError(t, err, "rank %d", r)
		assert.Equal(t, want[r], j.dst[r])
	}
	// Rank 3 never starts: rank 1 waits, and its watch finds the peer gone.
	j = newLaneJob(t, spec, 3, coll.Int32, coll.Sum, inputs)
	errs := run(j, 3, func() time.Time { return time.Now().Add(300 * time.Millisecond) }, func(r int) exec.Watch {
		if r == 1 {
			return failWatch{}
		}
		return nil
	})
	var le *exec.LaneError
	require.ErrorAs(t, errs[1], &le)
	assert.ErrorIs(t, errs[1], errPeerGone)
	for r, err := range errs {
		assert.ErrorContains(t, err, "lane ", "rank %d", r)
	}
}
