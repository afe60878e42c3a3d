package ucxmp

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/fakedev"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/mpath"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

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
	ts := engineMesh(t, n, func(r int) DeviceEngine {
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
