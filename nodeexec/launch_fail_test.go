package nodeexec

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/devsync"
)

// localOnGPU0 is rank's Local of a team of size on GPU 0, current on
// the test's thread (locked to it until the test ends), closed at the
// test's end; it skips without a GPU.
func localOnGPU0(t *testing.T, rank, size, slot int) (*cuda.Device, *Local) {
	t.Helper()
	gpusOrSkip(t)
	dev, err := cuda.Open(0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = dev.Close() })
	require.NoError(t, dev.MakeCurrent())
	l, err := New(dev, rank, size, slot)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	return dev, l
}

// gpusOrSkip is how many GPUs the driver shows, the test's goroutine
// locked to its thread until the test ends; it skips without a GPU.
func gpusOrSkip(t *testing.T) int {
	t.Helper()
	if err := cuda.Load(); err != nil {
		t.Skipf("no CUDA driver: %v", err)
	}
	n, err := cuda.DeviceCount()
	if err != nil || n < 1 {
		t.Skipf("no GPU (%d, %v)", n, err)
	}
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	return n
}

// A call in pieces whose second piece fails to launch, with the first
// already queued and waiting for a peer that never comes: Begin must not
// return while that kernel still runs (it would write the output, and
// read the scratch, after the caller was told the call failed, and
// Close would free the scratch under it). Rank 0 of a team of two on one
// GPU, the peer's region a buffer of this process that nobody signals;
// the grid of the second piece is one the launch refuses.
func TestFailedLaterPieceLeavesNoKernelRunning(t *testing.T) {
	const slot = 64 << 10
	dev, l := localOnGPU0(t, 0, 2, slot)
	peer, err := dev.Alloc(devsync.ScratchBytes(slot))
	require.NoError(t, err)
	defer func() { require.NoError(t, peer.Free()) }()
	require.NoError(t, peer.Memset(0, devsync.ZeroedBytes, 0))
	l.ptrs = []cuda.DevicePtr{l.scratch.Ptr(), peer.Ptr()}
	launches := 0
	l.grid = func(bytes int) cuda.NodeGrid {
		if launches++; launches > 1 {
			return cuda.NodeGrid{} // refused: the second piece fails
		}
		return cuda.DefaultNodeGrid(bytes)
	}
	const count = 4 * slot / 4 // float32: four slots' worth, several pieces
	in, err := dev.Alloc(4 * count)
	require.NoError(t, err)
	defer func() { require.NoError(t, in.Free()) }()
	out, err := dev.Alloc(4 * count)
	require.NoError(t, err)
	defer func() { require.NoError(t, out.Free()) }()
	err = l.Begin(Call{Collective: coll.Allreduce, Dtype: coll.Float32, Op: coll.Sum, Count: count, In: in.Ptr(), Out: out.Ptr()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "piece 2 of")
	idle, qerr := l.stream.Done()
	if !idle {
		// Let the first piece go before failing, or the test's own
		// frees would race it.
		l.abort.Store(1)
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
			if done, _ := l.stream.Done(); done {
				break
			}
		}
	}
	require.NoError(t, qerr)
	assert.True(t, idle, "Begin failed while its first piece's kernel still waited for the peer")
	assert.False(t, l.running)
	assert.Equal(t, uint64(l.epoch), l.status.Load(), "the first piece ended by the abort word, reporting its epoch")
}

// An Open that fails leaves the Local unopened: Begin refuses, rather
// than launching a kernel that signals through a peer address of zero
// (before, the addresses were kept with the unmapped peers' left zero).
// Rank 1 of three on one GPU: rank 0's card holds this process's own
// region, which the driver does not map again in the process that made
// it, and rank 2's a made-up handle; either fails the Open.
func TestFailedOpenLeavesTheLocalUnopened(t *testing.T) {
	_, l := localOnGPU0(t, 1, 3, 64<<10)
	mine, err := l.Card()
	require.NoError(t, err)
	c, err := decodeCard(mine)
	require.NoError(t, err)
	bad := c
	for i := range bad.ipc {
		bad.ipc[i] = byte(0xa5 ^ i)
	}
	cards := [][]byte{encodeCard(c), mine, encodeCard(bad)}
	require.Error(t, l.Open(cards, true))
	assert.Nil(t, l.ptrs, "a Local whose Open failed keeps no addresses")
	err = l.Begin(Call{Collective: coll.Allreduce, Dtype: coll.Float32, Op: coll.Sum, Count: 8, In: l.scratch.Ptr(), Out: l.scratch.Ptr()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Begin before Open")
}
