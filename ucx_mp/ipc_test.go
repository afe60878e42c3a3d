package ucxmp

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/fakedev"
	"github.com/goring-hpc/goring/sched"
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
