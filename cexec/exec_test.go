package cexec

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/memtransport"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
	"github.com/goring-hpc/goring/ucx"
)

func TestMain(m *testing.M) {
	if os.Getenv("UCX_WARN_UNUSED_ENV_VARS") == "" {
		os.Setenv("UCX_WARN_UNUSED_ENV_VARS", "n")
	}
	os.Exit(m.Run())
}

// job is n ranks in one process: a worker each on one UCX context, every
// worker connected to every other (and to itself), and a C team per rank.
type job struct {
	ctx     *ucx.Context
	workers []*ucx.Worker
	eps     [][]*ucx.Endpoint
	teams   []*Team
}

func newJob(t *testing.T, n int) *job {
	t.Helper()
	if err := ucx.Load(); err != nil {
		t.Skipf("libucp cannot be loaded, C executor tests skipped: %v", err)
	}
	ctx, err := ucx.Init(ucx.Options{})
	require.NoError(t, err)
	j := &job{ctx: ctx}
	t.Cleanup(j.close)
	addrs := make([][]byte, n)
	for r := 0; r < n; r++ {
		w, err := ctx.NewWorker(ucx.WorkerOptions{})
		require.NoError(t, err)
		j.workers = append(j.workers, w)
		addrs[r], err = w.Address()
		require.NoError(t, err)
	}
	for r := 0; r < n; r++ {
		row := make([]*ucx.Endpoint, n)
		for p := 0; p < n; p++ {
			row[p], err = j.workers[r].Connect(addrs[p], ucx.EndpointOptions{NoPeerErrors: true})
			require.NoError(t, err)
		}
		j.eps = append(j.eps, row)
		tm, err := NewTeam(j.workers[r], r, n, func(p int) *ucx.Endpoint { return row[p] })
		require.NoError(t, err)
		j.teams = append(j.teams, tm)
	}
	return j
}

func (j *job) close() {
	for _, tm := range j.teams {
		tm.Free()
	}
	for _, row := range j.eps {
		for _, e := range row {
			_ = e.Close()
		}
	}
	for _, w := range j.workers {
		_ = w.Close()
	}
	_ = j.ctx.Close()
}

// cBytes copies b into C memory (UCX holds buffers past a cgo call).
func cBytes(t *testing.T, b []byte) []byte {
	m := ucx.Alloc(max(len(b), 1))[:len(b)]
	t.Cleanup(func() { _ = ucx.Free(m[:cap(m)]) })
	copy(m, b)
	return m
}

func ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b[:cap(b)])) }

// runAll posts every rank's call and tests them round robin until all are
// done, as n processes would.
func runAll(t *testing.T, calls []*Call, src, dst [][]byte) {
	t.Helper()
	for r, c := range calls {
		var s unsafe.Pointer
		if src[r] != nil {
			s = ptr(src[r])
		}
		require.NoError(t, c.Post(s, ptr(dst[r])), "rank %d post", r)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		all := true
		for r, c := range calls {
			switch c.Test() {
			case Failed:
				t.Fatalf("rank %d failed: %v", r, c.Err())
			case Running, Watch:
				all = false
			}
		}
		if all {
			return
		}
		require.True(t, time.Now().Before(deadline), "C calls did not finish in 20 s")
	}
}

// TestMatchesGoExecutor runs every host algorithm of the four collectives
// the C path serves through the C executor over UCX and through the Go
// executor over the in-memory network, on the same inputs, and compares
// every rank's dst byte for byte (odd element counts and rank counts
// included, twice per shape so reused calls are covered).
func TestMatchesGoExecutor(t *testing.T) {
	colls := []coll.Collective{coll.Allreduce, coll.Allgather, coll.ReduceScatter, coll.Bcast}
	rng := rand.New(rand.NewSource(7))
	for _, n := range []int{2, 3, 4} {
		j := newJob(t, n)
		tp, err := topo.Synthetic(fmt.Sprintf("t%d", n), 1, n, 1)
		require.NoError(t, err)
		for ci, c := range colls {
			for _, a := range sched.Algorithms(c) {
				for _, dt := range []coll.Dtype{coll.Float32, coll.Int8, coll.Float16} {
					for _, count := range []int64{1, 5, 33} {
						name := fmt.Sprintf("%d/%s/%s/%v/%d", n, c, a.Name, dt, count)
						runShape(t, j, tp, uint8(ci+1), c, a.Name, dt, count, rng, name)
					}
				}
			}
		}
	}
}

func runShape(t *testing.T, j *job, tp *topo.Topology, ckey uint8, c coll.Collective, alg string, dt coll.Dtype, count int64, rng *rand.Rand, name string) {
	n := len(j.teams)
	B := count * int64(dt.Size())
	spec := sched.Spec{Collective: c, Algorithm: alg, Topo: tp, Bytes: B, DtypeBytes: dt.Size(), Root: n - 1}
	plan, err := sched.Generate(spec)
	if sched.IsUnsupported(err) {
		return
	}
	require.NoError(t, err, name)
	op := coll.Sum
	inputs := make([][]byte, n)
	for r := range inputs {
		inputs[r] = make([]byte, plan.Ranks[r].Sizes.Src)
		for i := range inputs[r] {
			inputs[r][i] = byte(rng.Intn(7)) // small values: float16 bit patterns stay finite
		}
	}
	want, err := memtransport.RunPlan(plan, dt, op, inputs)
	require.NoError(t, err, name)
	key := Key{Coll: ckey, Dtype: uint8(dt), Op: uint8(op), Count: uint64(count), Alg: alg}
	layout := Plain
	if c == coll.Bcast {
		layout = OneBuffer
	}
	for r := 0; r < n; r++ {
		p, err := Lower(&plan.Ranks[r], alg, dt, op, layout, false)
		require.NoError(t, err, name)
		_, err = j.teams[r].Put(key, p)
		require.NoError(t, err)
		p.Release()
	}
	for round := 0; round < 2; round++ {
		calls := make([]*Call, n)
		src, dst := make([][]byte, n), make([][]byte, n)
		for r := 0; r < n; r++ {
			calls[r], err = j.teams[r].NewCall(key)
			require.NoError(t, err, name)
			z := plan.Ranks[r].Sizes
			d := make([]byte, z.Dst)
			for i := range d {
				d[i] = 0xA5
			}
			dst[r] = cBytes(t, d)
			if c == coll.Bcast {
				copy(dst[r], inputs[r]) // one buffer: the root's input is its message
			} else {
				src[r] = cBytes(t, inputs[r])
			}
		}
		runAll(t, calls, src, dst)
		for r := 0; r < n; r++ {
			require.Equal(t, want[r], dst[r], "%s rank %d round %d", name, r, round)
			calls[r].Finalize()
		}
	}
}

// TestInPlaceLayouts checks the layouts of in-place calls against the Go
// executor's results: allgather's src in dst, allreduce's private copy of
// dst, reduce_scatter's copy with the result at the rank's block.
func TestInPlaceLayouts(t *testing.T) {
	const n, count = 3, 9
	dt, op := coll.Int32, coll.Sum
	j := newJob(t, n)
	tp, err := topo.Synthetic("t3", 1, n, 1)
	require.NoError(t, err)
	B := int64(count * dt.Size())
	cases := []struct {
		c        coll.Collective
		alg      string
		layout   Layout
		dstShift bool
	}{
		{coll.Allgather, "ring", SrcInDst, false},
		{coll.Allreduce, "rabenseifner", CopyIn, false},
		{coll.Allreduce, "ring", CopyIn, false},
		{coll.ReduceScatter, "ring", CopyIn, true},
	}
	for i, tc := range cases {
		plan, err := sched.Generate(sched.Spec{Collective: tc.c, Algorithm: tc.alg, Topo: tp, Bytes: B, DtypeBytes: dt.Size()})
		require.NoError(t, err)
		inputs := make([][]byte, n)
		for r := range inputs {
			inputs[r] = make([]byte, plan.Ranks[r].Sizes.Src)
			for k := range inputs[r] {
				inputs[r][k] = byte(r*31 + k)
			}
		}
		want, err := memtransport.RunPlan(plan, dt, op, inputs)
		require.NoError(t, err)
		key := Key{Coll: uint8(10 + i), Dtype: uint8(dt), Op: uint8(op), InPlace: true, Count: count, Alg: tc.alg}
		calls := make([]*Call, n)
		dst := make([][]byte, n)
		for r := 0; r < n; r++ {
			p, err := Lower(&plan.Ranks[r], tc.alg, dt, op, tc.layout, tc.dstShift)
			require.NoError(t, err)
			_, err = j.teams[r].Put(key, p)
			require.NoError(t, err)
			p.Release()
			calls[r], err = j.teams[r].NewCall(key)
			require.NoError(t, err)
			// In place, dst holds the input where UCC's meaning puts it.
			switch tc.c {
			case coll.Allgather:
				d := make([]byte, n*int(B))
				copy(d[r*int(B):], inputs[r])
				dst[r] = cBytes(t, d)
			default:
				dst[r] = cBytes(t, inputs[r])
			}
		}
		runAll(t, calls, make([][]byte, n), dst)
		for r := 0; r < n; r++ {
			got := dst[r]
			if tc.dstShift {
				got = got[int64(r)*B : int64(r+1)*B]
			}
			require.Equal(t, want[r], got[:len(want[r])], "%s/%s rank %d", tc.c, tc.alg, r)
			calls[r].Finalize()
		}
	}
}

// TestLatePeerThenFail: a rank that never posts leaves the others running
// (never failing on their own: a late rank is not an error), due for a
// check of their peers every half second; the caller's verdict fails the
// call, which cancels its receives, and its memory is reused afterwards.
func TestLatePeerThenFail(t *testing.T) {
	const n = 2
	j := newJob(t, n)
	tp, err := topo.Synthetic("t2", 1, n, 1)
	require.NoError(t, err)
	plan, err := sched.Generate(sched.Spec{Collective: coll.Allreduce, Algorithm: "ring", Topo: tp, Bytes: 64, DtypeBytes: 4})
	require.NoError(t, err)
	key := Key{Coll: 1, Dtype: uint8(coll.Float32), Op: uint8(coll.Sum), Count: 16, Alg: "ring"}
	p, err := Lower(&plan.Ranks[0], "ring", coll.Float32, coll.Sum, Plain, false)
	require.NoError(t, err)
	_, err = j.teams[0].Put(key, p)
	require.NoError(t, err)
	p.Release()
	c, err := j.teams[0].NewCall(key)
	require.NoError(t, err)
	src, dst := cBytes(t, make([]byte, 64)), cBytes(t, make([]byte, 64))
	require.NoError(t, c.Post(ptr(src), ptr(dst)))
	start := time.Now()
	watched := false
	for time.Since(start) < 700*time.Millisecond {
		switch c.Test() {
		case Watch:
			watched = true
		case Running:
		default:
			t.Fatalf("a call whose peer is late ended: %v", c.Err())
		}
	}
	require.True(t, watched, "no peer check was due after 0.7 s")
	c.Fail()
	require.Equal(t, Failed, c.Test())
	require.ErrorContains(t, c.Err(), "ring")
	c.Finalize()
	// The same call memory serves the next call of the shape.
	c2, err := j.teams[0].NewCall(key)
	require.NoError(t, err)
	require.NoError(t, c2.Post(ptr(src), ptr(dst)))
	require.Equal(t, uint32(2), c2.Seq(), "each post takes the next sequence number")
	c2.Fail()
	c2.Finalize()
}

// TestTeamFromSeveralThreads drives each rank's team from several
// goroutines at once, as UCC's progress does in a multi-threaded MPI:
// eight calls posted in order, then tested concurrently by four
// goroutines per rank, each holding the team's lock around its test. Every
// call must finish with the right sum.
func TestTeamFromSeveralThreads(t *testing.T) {
	const n, calls, threads, count = 2, 8, 4, 16
	j := newJob(t, n)
	tp, err := topo.Synthetic("t2", 1, n, 1)
	require.NoError(t, err)
	plan, err := sched.Generate(sched.Spec{Collective: coll.Allreduce, Algorithm: "ring", Topo: tp, Bytes: 4 * count, DtypeBytes: 4})
	require.NoError(t, err)
	key := Key{Coll: 30, Dtype: uint8(coll.Int32), Op: uint8(coll.Sum), Count: count, Alg: "ring"}
	cs := make([][]*Call, n)
	dst := make([][][]byte, n)
	for r := 0; r < n; r++ {
		p, err := Lower(&plan.Ranks[r], "ring", coll.Int32, coll.Sum, Plain, false)
		require.NoError(t, err)
		_, err = j.teams[r].Put(key, p)
		require.NoError(t, err)
		p.Release()
		for i := 0; i < calls; i++ {
			c, err := j.teams[r].NewCall(key)
			require.NoError(t, err)
			src := make([]byte, 4*count)
			for e := 0; e < count; e++ {
				binary.LittleEndian.PutUint32(src[4*e:], uint32(1000*i+10*r+e))
			}
			s, d := cBytes(t, src), cBytes(t, make([]byte, 4*count))
			require.NoError(t, c.Post(ptr(s), ptr(d)))
			cs[r] = append(cs[r], c)
			dst[r] = append(dst[r], d)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, n*threads)
	for r := 0; r < n; r++ {
		for th := 0; th < threads; th++ {
			wg.Add(1)
			go func(r, th int) {
				defer wg.Done()
				deadline := time.Now().Add(20 * time.Second)
				for left := true; left; {
					left = false
					for i := th; i < calls; i += threads {
						j.teams[r].Lock()
						st := cs[r][i].Test()
						j.teams[r].Unlock()
						switch st {
						case Failed:
							errs <- fmt.Errorf("rank %d call %d: %v", r, i, cs[r][i].Err())
							return
						case Running, Watch:
							left = true
						}
					}
					if time.Now().After(deadline) {
						errs <- fmt.Errorf("rank %d thread %d: calls still running after 20 s", r, th)
						return
					}
				}
			}(r, th)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for r := 0; r < n; r++ {
		for i := 0; i < calls; i++ {
			for e := 0; e < count; e++ {
				want := uint32(2*(1000*i+e) + 10)
				require.Equal(t, want, binary.LittleEndian.Uint32(dst[r][i][4*e:]), "rank %d call %d element %d", r, i, e)
			}
			cs[r][i].Finalize()
		}
	}
}
