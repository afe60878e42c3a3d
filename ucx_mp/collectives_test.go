package ucxmp_test

// Collectives through package bench over the transport: an external test
// package, for bench imports the team layer, which imports this package.
// The transports come from the package's own test helpers (export_test.go).

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/fakedev"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/mpath"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
	"github.com/goring-hpc/goring/ucx"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// Every algorithm of every collective, on fake device memory that only
// the engine can move (UCX refuses it): each transfer must go through
// the push protocol, and the contents are validated every iteration.
func TestPushProtocolRunsEveryAlgorithm(t *testing.T) {
	tp, err := topo.Synthetic("push", 2, 2, 1)
	require.NoError(t, err)
	n := tp.NumGPUs()
	arena := fakedev.New(11)
	engines := make([]*fakedev.Engine, n)
	ts := ucxmp.EngineMesh(t, n, func(r int) ucxmp.DeviceEngine { engines[r] = arena.Engine(r); return engines[r] })
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

// A sender that cannot map the receiver's buffer during a call (a
// mapping of memory the peer freed cannot be closed while UCC holds the
// caller's stream: exec.ErrMappingBusy) stages that transfer through host
// memory instead, and the receiver takes it so: every algorithm, about
// half the pushes refused at random, contents validated every iteration,
// every staging buffer handed back.
func TestPushFallsBackToStagingWhenAMappingIsBusy(t *testing.T) {
	tp, err := topo.Synthetic("busy", 2, 2, 1)
	require.NoError(t, err)
	n := tp.NumGPUs()
	arena := fakedev.New(13)
	engines := make([]*fakedev.Engine, n)
	stagers := make([]*fakedev.Stager, n)
	var mu sync.Mutex
	coin := uint64(7)
	busy := func() bool { // a shared xorshift: the ranks run in goroutines of their own
		mu.Lock()
		defer mu.Unlock()
		coin ^= coin << 13
		coin ^= coin >> 7
		coin ^= coin << 17
		return coin&1 == 0
	}
	ts := ucxmp.MeshWith(t, n, func(r int) ucxmp.Options {
		engines[r], stagers[r] = arena.Engine(r), &fakedev.Stager{Arena: arena}
		engines[r].Busy = busy
		return ucxmp.Options{Engine: engines[r], Stager: stagers[r], SameHost: func(int) bool { return true }}
	})
	runEveryAlgorithm(t, tp, ts, arena)
	for r := range n {
		assert.Equal(t, engines[r].Busied, ts[r].BusyStaged(), "rank %d: every refused push staged, and counted", r)
		assert.Positive(t, engines[r].Busied, "rank %d had pushes refused", r)
		assert.Positive(t, engines[r].Started, "rank %d pushed", r)
		assert.Positive(t, stagers[r].Staged, "rank %d staged", r)
		assert.Zero(t, stagers[r].Outstanding, "rank %d: staging buffers handed back", r)
	}
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
	ts := ucxmp.MeshWith(t, n, func(r int) ucxmp.Options {
		engines[r], stagers[r] = arena.Engine(r), &fakedev.Stager{Arena: arena}
		return ucxmp.Options{Engine: engines[r], Stager: stagers[r], SameHost: func(p int) bool { return p/2 == r/2 }}
	})
	runEveryAlgorithm(t, tp, ts, arena)
	for r := range n {
		assert.Positive(t, stagers[r].Staged, "rank %d staged", r)
		assert.Positive(t, engines[r].Started, "rank %d pushed", r)
		assert.Zero(t, stagers[r].Outstanding, "rank %d: staging buffers handed back", r)
	}
}

// The namespace testbed's data plane on device memory (goring bench
// --netns --mem cuda): two nodes of two ranks, two rails, every rank's
// rail transports moving host memory only. The push engine carries device
// buffers between the ranks of a node, host staging those between nodes
// on the sender's rail. Every algorithm validated (the rail hints of
// Parallel Rings, lane and NIMBLE included); both paths used; every
// staging buffer handed back.
func TestRailsOnDeviceMemory(t *testing.T) {
	tb := topo.Testbed{Nodes: 2, PPN: 2, Rails: 2, RailGBps: 0.125, RailAlphaUS: 30, CopyGBps: 6, CopyAlphaUS: 1}
	tp, err := tb.Topology()
	require.NoError(t, err)
	n := tp.NumGPUs()
	railOf := func(r int) int { k, l, _ := tp.Locate(r); return tp.Nodes[k].GPUs[l].Rail }
	arena := fakedev.New(14)
	engines := make([]*fakedev.Engine, n)
	stagers := make([]*fakedev.Stager, n)
	for r := range n {
		engines[r], stagers[r] = arena.Engine(r), &fakedev.Stager{Arena: arena}
	}
	rs := ucxmp.RailsMesh(t, 2, 2, 2, railOf,
		func(r int) ucxmp.Options {
			return ucxmp.Options{Engine: engines[r], SameHost: func(p int) bool { return p/2 == r/2 }}
		},
		func(r int) ucxmp.Options { return ucxmp.Options{Stager: stagers[r]} })
	runEveryAlgorithm(t, tp, rs, arena)
	for r := range n {
		assert.Positive(t, stagers[r].Staged, "rank %d staged onto its rail", r)
		assert.Positive(t, engines[r].Started, "rank %d pushed within its node", r)
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
func runEveryAlgorithm[T bench.Transport](t *testing.T, tp *topo.Topology, ts []T, arena *fakedev.Arena) {
	t.Helper()
	runAlgorithms(t, tp, ts, arena, everyCollective, false)
}

// runAlgorithms runs every algorithm of each case over ts, every rank in a
// goroutine of its own, validated every iteration; stepLoads annotates the
// programs with their step loads (bench.Config.StepLoads).
func runAlgorithms[T bench.Transport](t *testing.T, tp *topo.Topology, ts []T, arena *fakedev.Arena, cases []collCase, stepLoads bool) {
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

// Real plans through exec.Run, every rank on its own goroutine and
// worker, checked with the bench validation patterns.
func TestRunsPlansOverUCX(t *testing.T) {
	tp, err := topo.Preset("clusterB")
	require.NoError(t, err)
	n := tp.NumGPUs()
	ts := ucxmp.Mesh(t, n)
	for i, c := range []struct {
		coll  coll.Collective
		bytes int64
	}{{coll.Allgather, 1}, {coll.Allgather, 100003}, {coll.Allreduce, 4 * 33333}} {
		algs := sched.Algorithms(c.coll)
		if len(algs) == 0 {
			continue
		}
		for _, alg := range algs {
			var wg sync.WaitGroup
			errs := make([]error, n)
			for r := 0; r < n; r++ {
				wg.Add(1)
				go func(r int) {
					defer wg.Done()
					cfg := bench.Config{Rank: r, Topo: tp, Collective: c.coll, Algorithms: []string{alg.Name},
						Sizes: []int64{c.bytes}, Dtype: coll.Float32, Op: coll.Sum, Iters: 3, Warmup: 1, Validate: true,
						Alloc: ucx.Alloc, Free: ucx.Free, CallTimeout: 20 * time.Second}
					_, errs[r] = bench.Run(context.Background(), cfg, ts[r], nopCtrl{})
				}(r)
			}
			wg.Wait()
			for r, err := range errs {
				require.NoError(t, err, "case %d %s rank %d", i, alg.Name, r)
			}
		}
	}
}

// nopCtrl stands in for the coordinator: the ranks here share a process
// and the bench's gathers only carry statistics.
type nopCtrl struct{}

func (nopCtrl) Allgather(context.Context, []byte) ([][]byte, error) {
	return [][]byte{make([]byte, 8)}, nil
}

// Collectives whose transfers within a node are split by the push engine:
// a planner that forces a third of every transfer (from 64 bytes) through
// a host path in three chunks, two staging slots, whenever the step's
// path hint carries a load (sends within the node of a program the runner
// annotated) and allows a split. Two emulated nodes of two ranks on one
// host: inter-node sends carry no load and stay single copies. Every
// algorithm of allgather, allreduce and alltoallv (NIMBLE's relays
// included, whose hints say direct) validated at odd sizes over real UCX
// and the fake device, whose engine runs each plan's ops in random order.
func TestCollectivesOverSplitTransfers(t *testing.T) {
	tp, err := topo.Synthetic("split", 2, 2, 1)
	require.NoError(t, err)
	n := tp.NumGPUs()
	arena := fakedev.New(13)
	engines := make([]*fakedev.Engine, n)
	var loaded, inter atomic.Int64
	planner := func(_ int, b int64, path sched.Path) *mpath.Plan {
		if path.Load.Out == 0 {
			inter.Add(1)
			return nil
		}
		loaded.Add(1)
		if b < 64 || (path.Kind != sched.PathAny && path.Kind != sched.PathHost) {
			return nil
		}
		h := b / 3
		split := model.Split{Bytes: b, Paths: []model.Share{
			{Path: model.Path{Name: model.DirectName, Beta1GBps: 100}, Bytes: b - h, Chunks: 1},
			{Path: model.Path{Name: model.HostName, Staged: true, Beta1GBps: 10, Beta2GBps: 10}, Bytes: h, Chunks: 3},
		}}
		p, err := mpath.Build(split, 2*((h+2)/3))
		if err != nil {
			panic(err)
		}
		return p
	}
	ts := ucxmp.EngineMesh(t, n, func(r int) ucxmp.DeviceEngine {
		engines[r] = arena.Engine(r)
		engines[r].SetPlanner(planner)
		return engines[r]
	})
	runAlgorithms(t, tp, ts, arena, []collCase{
		{coll.Allgather, coll.DtypeInvalid, coll.OpInvalid, []int64{40001, 3}},
		{coll.Allreduce, coll.Float32, coll.Sum, []int64{40004, 4}},
		{coll.Alltoallv, coll.DtypeInvalid, coll.OpInvalid, []int64{4099}},
	}, true)
	for r, e := range engines {
		assert.Positive(t, e.Planned, "rank %d split transfers", r)
	}
	assert.Positive(t, loaded.Load(), "sends within a node carry their load")
	assert.Positive(t, inter.Load(), "sends between nodes carry none")
}
