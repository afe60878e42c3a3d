package ucxmp

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/fakedev"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
	"github.com/goring-hpc/goring/ucx"
)

// engineMesh is mesh with a push engine per rank (engine(r)) and every
// peer on one host.
func engineMesh(t *testing.T, n int, engine func(r int) DeviceEngine) []*Transport {
	t.Helper()
	return meshWith(t, n, func(r int) Options {
		return Options{Engine: engine(r), SameHost: func(int) bool { return true }}
	})
}

// Every algorithm of every collective, on fake device memory that only
// the engine can move (UCX refuses it): each transfer must go through
// the push protocol, and the contents are validated every iteration.
func TestPushProtocolRunsEveryAlgorithm(t *testing.T) {
	tp, err := topo.Synthetic("push", 2, 2, 1)
	require.NoError(t, err)
	n := tp.NumGPUs()
	arena := fakedev.New(11)
	engines := make([]*fakedev.Engine, n)
	ts := engineMesh(t, n, func(r int) DeviceEngine { engines[r] = arena.Engine(r); return engines[r] })
	runEveryAlgorithm(t, tp, ts, arena)
	started, mapped := 0, 0
	for _, e := range engines {
		started += e.Started
		mapped += e.Mapped
	}
	assert.Positive(t, started)
	// The leader algorithms make few copies per allocation (one per peer),
	// so the ratio over all algorithms is about 1:4, not lower.
	assert.Less(t, mapped, started/3, "mappings are cached per allocation, not opened per copy")
}

// Two "hosts" of two ranks: the push engine between ranks of one host,
// host staging between hosts (UCX here moves no device memory). Every
// algorithm validated; every staging buffer handed back.
func TestStagingBetweenHosts(t *testing.T) {
	tp, err := topo.Synthetic("staged", 2, 2, 1)
	require.NoError(t, err)
	n := tp.NumGPUs()
	arena := fakedev.New(12)
	engines := make([]*fakedev.Engine, n)
	stagers := make([]*fakedev.Stager, n)
	ts := meshWith(t, n, func(r int) Options {
		engines[r], stagers[r] = arena.Engine(r), &fakedev.Stager{Arena: arena}
		return Options{Engine: engines[r], Stager: stagers[r], SameHost: func(p int) bool { return p/2 == r/2 }}
	})
	runEveryAlgorithm(t, tp, ts, arena)
	for r := range n {
		assert.Positive(t, stagers[r].Staged, "rank %d staged", r)
		assert.Positive(t, engines[r].Started, "rank %d pushed", r)
		assert.Zero(t, stagers[r].Outstanding, "rank %d: staging buffers handed back", r)
	}
}

// collCase is a collective with its reduction and the sizes a test runs.
type collCase struct {
	c     coll.Collective
	dtype coll.Dtype
	op    coll.Op
	sizes []int64
}

// everyCollective is the five collectives at small and odd sizes.
var everyCollective = []collCase{
	{coll.Allgather, coll.DtypeInvalid, coll.OpInvalid, []int64{1, 40001}},
	{coll.Allreduce, coll.Float32, coll.Sum, []int64{4, 40004}},
	{coll.ReduceScatter, coll.Int16, coll.Max, []int64{2, 1026}},
	{coll.Bcast, coll.DtypeInvalid, coll.OpInvalid, []int64{3333}},
	{coll.Alltoallv, coll.DtypeInvalid, coll.OpInvalid, []int64{7, 4096}},
}

// runEveryAlgorithm runs every algorithm of the five collectives over ts
// with buffers on the arena's fake devices, validated every iteration.
func runEveryAlgorithm(t *testing.T, tp *topo.Topology, ts []*Transport, arena *fakedev.Arena) {
	t.Helper()
	runAlgorithms(t, tp, ts, arena, everyCollective, false)
}

// runAlgorithms runs every algorithm of each case over ts, every rank in a
// goroutine of its own, validated every iteration; stepLoads annotates the
// programs with their step loads (bench.Config.StepLoads).
func runAlgorithms(t *testing.T, tp *topo.Topology, ts []*Transport, arena *fakedev.Arena, cases []collCase, stepLoads bool) {
	t.Helper()
	n := len(ts)
	for _, tc := range cases {
		for _, alg := range sched.Algorithms(tc.c) {
			var wg sync.WaitGroup
			errs := make([]error, n)
			for r := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cfg := bench.Config{Rank: r, Topo: tp, Collective: tc.c, Algorithms: []string{alg.Name}, Sizes: tc.sizes,
						Dtype: tc.dtype, Op: tc.op, Iters: 2, Warmup: 1, Validate: true, Root: 1, CallTimeout: 20 * time.Second,
						StepLoads: stepLoads,
						Traffic:   func(b int64) ([][]int64, error) { return bench.UniformCounts(n, b), nil },
						Memory:    fakedev.Memory{Arena: arena, Dev: r % 2}}
					_, errs[r] = bench.Run(context.Background(), cfg, ts[r], nopCtrl{})
				}()
			}
			wg.Wait()
			for r, err := range errs {
				require.NoError(t, err, "%v %s rank %d", tc.c, alg.Name, r)
			}
		}
	}
}

// A message longer than the receiver's buffer fails on both sides with
// the sender's length reported; nothing is written.
func TestPushProtocolTruncation(t *testing.T) {
	arena := fakedev.New(5)
	ts := engineMesh(t, 2, func(r int) DeviceEngine { return arena.Engine(r) })
	a, b := ts[0], ts[1]
	src, dst := arena.Alloc(0, 4096), arena.Alloc(0, 100)
	require.NoError(t, b.PostRecv(&exec.Post{Peer: 0, Tag: 9, Buf: dst, Token: 1}))
	require.NoError(t, a.PostSend(&exec.Post{Peer: 1, Tag: 9, Buf: src, Token: 2}))
	ga, gb := pump(t, a, b, 1, 1)
	assert.ErrorIs(t, ga[0].Err, ucx.ErrMessageTruncated)
	assert.ErrorIs(t, gb[0].Err, ucx.ErrMessageTruncated)
	assert.Equal(t, int64(4096), gb[0].Len)
	got, err := arena.Read(dst)
	require.NoError(t, err)
	assert.Equal(t, byte(0xDD), got[0], "nothing written into the short buffer")
}

// A sender that cannot map the receiver's buffer fails its send with the
// engine's reason and the receiver learns of it: neither side hangs.
func TestPushProtocolMappingFailure(t *testing.T) {
	arena := fakedev.New(6)
	ts := engineMesh(t, 2, func(r int) DeviceEngine { return failingStart{arena.Engine(r)} })
	a, b := ts[0], ts[1]
	src, dst := arena.Alloc(0, 64), arena.Alloc(0, 64)
	require.NoError(t, b.PostRecv(&exec.Post{Peer: 0, Tag: 3, Buf: dst, Token: 1}))
	require.NoError(t, a.PostSend(&exec.Post{Peer: 1, Tag: 3, Buf: src, Token: 2}))
	ga, gb := pump(t, a, b, 1, 1)
	assert.ErrorIs(t, ga[0].Err, errNoMap)
	assert.ErrorIs(t, gb[0].Err, errPeerNoMapping)
}

// Cancelling a send whose copy is under way waits for the copy; a
// cancelled receive's DONE is dropped.
func TestPushProtocolCancel(t *testing.T) {
	arena := fakedev.New(7)
	ts := engineMesh(t, 2, func(r int) DeviceEngine { return arena.Engine(r) })
	a, b := ts[0], ts[1]
	src, dst := arena.Alloc(0, 64), arena.Alloc(0, 64)
	require.NoError(t, arena.Write(src, make([]byte, 64)))
	require.NoError(t, b.PostRecv(&exec.Post{Peer: 0, Tag: 4, Buf: dst, Token: 1}))
	require.NoError(t, a.PostSend(&exec.Post{Peer: 1, Tag: 4, Buf: src, Token: 2}))
	deadline := time.Now().Add(5 * time.Second)
	for len(a.copying) == 0 && time.Now().Before(deadline) {
		a.progress()
		b.progress()
	}
	require.Len(t, a.copying, 1, "the copy started")
	require.NoError(t, a.Cancel(2))
	assert.Empty(t, a.copying)
	assert.Empty(t, a.ipcOps)
	require.NoError(t, b.Cancel(1))
	assert.Empty(t, b.ipcOps)
	got, err := a.Wait(time.Now().Add(20*time.Millisecond), nil)
	require.NoError(t, err)
	assert.Empty(t, got)
}

var errNoMap = errors.New("cannot map")

type failingStart struct{ *fakedev.Engine }

func (failingStart) Start(int, []byte, int64, exec.Region, sched.Path) (uint64, error) {
	return 0, errNoMap
}

// A buffer the receiver cannot export goes the way UCX can carry it: here
// host staging (UCX moves no fake memory), announced in the clear-to-send.
func TestPushProtocolUnexportableBuffer(t *testing.T) {
	arena := fakedev.New(8)
	ts := meshWith(t, 2, func(r int) Options {
		return Options{Engine: failingExport{arena.Engine(r)}, Stager: &fakedev.Stager{Arena: arena}, SameHost: func(int) bool { return true }}
	})
	a, b := ts[0], ts[1]
	src, dst := arena.Alloc(0, 4099), arena.Alloc(1, 4099)
	want := make([]byte, 4099)
	for i := range want {
		want[i] = byte(i * 7)
	}
	require.NoError(t, arena.Write(src, want))
	require.NoError(t, b.PostRecv(&exec.Post{Peer: 0, Tag: 6, Buf: dst, Token: 1}))
	require.NoError(t, a.PostSend(&exec.Post{Peer: 1, Tag: 6, Buf: src, Token: 2}))
	ga, gb := pump(t, a, b, 1, 1)
	require.NoError(t, ga[0].Err)
	require.NoError(t, gb[0].Err)
	got, err := arena.Read(dst)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

type failingExport struct{ *fakedev.Engine }

func (failingExport) Export(exec.Region) ([]byte, int64, error) { return nil, 0, errNoMap }
