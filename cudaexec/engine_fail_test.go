package cudaexec

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/mpath"
	"github.com/goring-hpc/goring/sched"
)

// failBytes is long enough that its copy is still running on the device
// when Start, failing right after queueing it, returns (milliseconds).
const failBytes = 2 << 30

// failingStart is an engine whose peer 1 has a cached mapping of n bytes
// (memory of this process: the range checks and copies need no peer),
// a source of n bytes, and the mapping's key.
func failingStart(t *testing.T, g *GPU) (*Engine, []byte, exec.Region) {
	t.Helper()
	e := NewEngine()
	t.Cleanup(func() { require.NoError(t, e.Close()) })
	d, err := e.device(0)
	require.NoError(t, err)
	dst, err := d.Alloc(failBytes)
	require.NoError(t, err)
	e.maps[mapKey{peer: 1, dev: 0, id: 7}] = &mapping{buf: dst, base: 1 << 40, size: failBytes}
	key := make([]byte, keyLen)
	binary.LittleEndian.PutUint64(key[64:], 7)
	binary.LittleEndian.PutUint64(key[72:], 1<<40)
	binary.LittleEndian.PutUint64(key[80:], failBytes)
	src, err := g.Alloc(failBytes)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Free(src)) })
	return e, key, src
}

// A Start that fails after it queued a copy into the peer's memory must
// not return while that copy still runs: the transport then tells the
// receiver the push failed, and nothing counts the copy against the
// mapping (inFlight), so the receiver's buffer and the mapping could be
// reused or closed under it. Here the event after the copy fails to
// record (one destroyed, in the pool).
func TestFailedDirectStartLeavesNoCopyRunning(t *testing.T) {
	g := openGPU(t)
	e, key, src := failingStart(t, g)
	d, err := e.device(0)
	require.NoError(t, err)
	ev, err := d.NewEvent(false)
	require.NoError(t, err)
	require.NoError(t, ev.Destroy())
	e.events[0] = []*cuda.Event{ev}
	_, err = e.Start(1, key, 0, src, sched.Path{})
	require.ErrorIs(t, err, cuda.ErrFreed)
	e.events[0] = nil // Close would destroy it again
	done, err := e.streams[streamKey{dev: 0, peer: 1}].Done()
	require.NoError(t, err)
	require.True(t, done, "Start failed while its copy into the peer's memory still ran")
}

// The same for a transfer split over paths: an op that fails after the
// direct share was queued (the direct share records no event of its own
// before the plan's ends) must not leave that share running.
func TestFailedPlanStartLeavesNoCopyRunning(t *testing.T) {
	g := openGPU(t)
	e, key, src := failingStart(t, g)
	const staged = 4096
	plan := &mpath.Plan{Bytes: failBytes, Streams: 3,
		Paths: []mpath.PathPlan{
			{Path: model.Path{Name: "direct"}, Bytes: failBytes - staged, Chunks: 1},
			{Path: model.Path{Name: model.HostName, Staged: true}, Bytes: staged, Chunks: 1, Slots: 1, SlotBytes: staged, Off: failBytes - staged},
		},
		Ops: []mpath.Op{
			{Path: 0, Stream: 0, From: mpath.Src, To: mpath.Dst, N: failBytes - staged},
			// From the destination to the source: no copy the engine
			// knows, so queueing it fails.
			{Path: 1, Stream: 1, From: mpath.Dst, To: mpath.Src, FromOff: failBytes - staged, ToOff: failBytes - staged, N: staged},
		},
		Waited: []bool{false, false}}
	e.SetPlanner(func(int, int64, sched.Path) *mpath.Plan { return plan })
	_, err := e.Start(1, key, 0, src, sched.Path{})
	require.ErrorContains(t, err, "op from")
	done, err := e.streams[streamKey{dev: 0, peer: 1}].Done()
	require.NoError(t, err)
	require.True(t, done, "Start failed while the plan's direct share into the peer's memory still ran")
}
