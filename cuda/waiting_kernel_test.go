package cuda

import (
	"testing"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/devsync"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Which driver calls of goring's wait for a kernel that waits. UCC holds a
// framework's stream while one of goring's calls runs (docs/gpu.md "The
// caller's stream"), and a driver call that waits for the device's queued
// work, made then, waits for that call itself. Here the waiting work is
// rank 0's node kernel, spinning for a rank 1 that never launches, on a
// stream of its own; each call is made from another goroutine beside it
// and has waitLimit to return, after which the abort word ends the kernel
// (and so whatever waited for it). A call that waited is reported, and
// must not be one goring makes while a call may be held: a device
// allocation (the fallback of a call whose runner changes at its post
// allocates its scratch then) and a copy on a stream of goring's own.
// The spinning kernel is not how UCC holds a stream (cuStreamCreate,
// which waited inside a call UCC held, returns beside it), so a call
// that returns here may still wait there.
func TestDriverCallsBesideAWaitingKernel(t *testing.T) {
	devs := nodeGPUs(t)
	k := len(devs)
	tm := newNodeTeam(t, devs, 1<<16, 1<<16)
	d := devs[0]
	before, err := d.Alloc(1 << 20)
	require.NoError(t, err)
	s, err := d.NewStream()
	require.NoError(t, err)
	t.Cleanup(func() { s.Destroy() })
	host := make([]byte, 4096)
	ops := []struct {
		name  string
		never bool // goring makes this call while a call may be held: it must not wait
		run   func() error
	}{
		{"cuMemAlloc, 64 MiB", true, func() error {
			b, err := d.Alloc(64 << 20)
			if err == nil {
				t.Cleanup(func() { b.Free() })
			}
			return err
		}},
		{"cuMemcpyDtoHAsync on a stream of its own, waited for on that stream", true, func() error {
			return CopyToHostOn(s, host, before.Ptr())
		}},
		{"cuMemHostAlloc, 1 MiB", false, func() error {
			b, err := d.AllocHost(1 << 20)
			if err == nil {
				t.Cleanup(func() { b.Free() })
			}
			return err
		}},
		{"cuStreamCreate", false, func() error {
			st, err := d.NewStream()
			if err == nil {
				t.Cleanup(func() { st.Destroy() })
			}
			return err
		}},
		{"cuEventCreate", false, func() error {
			e, err := d.NewEvent(false)
			if err == nil {
				t.Cleanup(func() { e.Destroy() })
			}
			return err
		}},
		{"cuMemFree of a buffer made before", false, func() error { return before.Free() }},
	}
	const waitLimit = 3 * time.Second
	live := []int{0}
	for _, op := range ops {
		tm.abort.Store(0)
		require.NoError(t, tm.launch(nodeCallSpec{alg: devsync.OneShotAllreduce, dt: coll.Float32, op: coll.Sum, count: 1000, grid: NodeGrid{1, 256}, ranks: live}))
		time.Sleep(50 * time.Millisecond)
		kdone, err := tm.streams[0].Done()
		require.NoError(t, err)
		require.False(t, kdone, "rank 0's kernel ended without rank 1")
		ret := make(chan error, 1)
		start := time.Now()
		go func() { ret <- op.run() }()
		var waited bool
		select {
		case err := <-ret:
			require.NoError(t, err, op.name)
		case <-time.After(waitLimit):
			waited = true
		}
		took := time.Since(start)
		tm.abort.Store(devsync.AbortWord(k - 1))
		tm.sync(t, 10*time.Second)
		if waited {
			require.NoError(t, <-ret, op.name)
			t.Logf("%-70s waited for the kernel (more than %v)", op.name, waitLimit)
		} else {
			t.Logf("%-70s returned in %v while the kernel waited", op.name, took.Round(time.Microsecond))
		}
		if op.never {
			assert.False(t, waited, "%s waited for a kernel on another stream", op.name)
		}
	}
}
