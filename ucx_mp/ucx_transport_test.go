package ucxmp

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
	"github.com/goring-hpc/goring/ucx"
)

// mesh builds n transports over n workers of one in-process context.
func mesh(t *testing.T, n int) []*Transport {
	t.Helper()
	return meshWith(t, n, func(int) Options { return Options{} })
}

// meshWith is mesh with rank r's transport built with opts(r).
func meshWith(t *testing.T, n int, opts func(r int) Options) []*Transport {
	t.Helper()
	if err := ucx.Load(); err != nil {
		t.Skipf("UCX not loadable: %v", err)
	}
	ctx, err := ucx.Init(ucx.Options{Config: map[string]string{"TLS": "self,sm"}})
	require.NoError(t, err)
	ws := make([]*ucx.Worker, n)
	addrs := make([][]byte, n)
	for i := range ws {
		ws[i], err = ctx.NewWorker(ucx.WorkerOptions{})
		require.NoError(t, err)
		addrs[i], err = ws[i].Address()
		require.NoError(t, err)
	}
	ts := make([]*Transport, n)
	for i := range ts {
		ts[i], err = New(ws[i], i, addrs, opts(i))
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		for i := range ts {
			_ = ts[i].Close()
			_ = ws[i].Close()
		}
		_ = ctx.Close()
	})
	return ts
}

// Two pumps: each side's Wait progresses its own worker only, so a test
// driving both from one goroutine alternates them.
func pump(t *testing.T, a, b *Transport, wantA, wantB int) ([]exec.Completion, []exec.Completion) {
	t.Helper()
	var ga, gb []exec.Completion
	deadline := time.Now().Add(5 * time.Second)
	for (len(ga) < wantA || len(gb) < wantB) && time.Now().Before(deadline) {
		ga, _ = a.Wait(time.Now().Add(time.Millisecond), ga)
		gb, _ = b.Wait(time.Now().Add(time.Millisecond), gb)
	}
	require.Len(t, ga, wantA)
	require.Len(t, gb, wantB)
	return ga, gb
}

func TestSequenceSeparatesCalls(t *testing.T) {
	ts := mesh(t, 2)
	a, b := ts[0], ts[1]
	a.SpinPolls, b.SpinPolls = 0, 0
	// Rank 0 sends the same step tag in two calls; rank 1 receives the
	// second call first: the sequence number in the tag keeps them apart.
	first, second := ucx.Alloc(64), ucx.Alloc(64)
	defer ucx.Free(first)
	defer ucx.Free(second)
	copy(first, bytes.Repeat([]byte{1}, 64))
	copy(second, bytes.Repeat([]byte{2}, 64))
	a.NextCall()
	b.NextCall()
	require.NoError(t, a.PostSend(&exec.Post{Peer: 1, Tag: 5, Buf: exec.HostRegion(first), Token: 10}))
	a.NextCall()
	require.NoError(t, a.PostSend(&exec.Post{Peer: 1, Tag: 5, Buf: exec.HostRegion(second), Token: 11}))
	got := ucx.Alloc(64)
	defer ucx.Free(got)
	b.NextCall()
	require.NoError(t, b.PostRecv(&exec.Post{Peer: 0, Tag: 5, Buf: exec.HostRegion(got), Token: 20}))
	ga, gb := pump(t, a, b, 2, 1)
	for _, c := range ga {
		assert.NoError(t, c.Err)
	}
	assert.Equal(t, uint64(20), gb[0].Token)
	assert.NoError(t, gb[0].Err)
	assert.Equal(t, int64(64), gb[0].Len)
	assert.Equal(t, bytes.Repeat([]byte{2}, 64), got)
}

func TestTruncatedReceiveFails(t *testing.T) {
	ts := mesh(t, 2)
	a, b := ts[0], ts[1]
	src, dst := ucx.Alloc(4096), ucx.Alloc(100)
	defer ucx.Free(src)
	defer ucx.Free(dst)
	require.NoError(t, b.PostRecv(&exec.Post{Peer: 0, Tag: 9, Buf: exec.HostRegion(dst), Token: 1}))
	require.NoError(t, a.PostSend(&exec.Post{Peer: 1, Tag: 9, Buf: exec.HostRegion(src), Token: 2}))
	_, gb := pump(t, a, b, 1, 1)
	assert.Error(t, gb[0].Err, "a longer message must not be written past the buffer")
}

func TestCancelReleasesReceive(t *testing.T) {
	ts := mesh(t, 2)
	b := ts[1]
	dst := ucx.Alloc(16)
	defer ucx.Free(dst)
	require.NoError(t, b.PostRecv(&exec.Post{Peer: 0, Tag: 3, Buf: exec.HostRegion(dst), Token: 7}))
	require.NoError(t, b.Cancel(7))
	assert.Empty(t, b.reqs)
	got, err := b.Wait(time.Now().Add(20*time.Millisecond), nil)
	require.NoError(t, err)
	assert.Empty(t, got, "a cancelled operation's completion is dropped")
	assert.NoError(t, b.Cancel(12345), "unknown tokens are a no-op")
	assert.Error(t, b.PostSend(&exec.Post{Peer: 9, Tag: 1, Buf: exec.HostRegion(nil), Token: 1}), "peer out of range")
}

// A caller that must not block (a UCC progress function) drives
// exec.Call.Progress with a zero wait: Wait then polls the worker once
// and returns. Four ranks of a ring allgather, all driven round-robin from
// this goroutine, complete with the right contents.
func TestZeroWaitPollsOverUCX(t *testing.T) {
	const n, block = 4, 100000
	ts := mesh(t, n)
	tp, err := topo.Synthetic("poll", 1, n, 1)
	require.NoError(t, err)
	plan, err := sched.Generate(sched.Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: tp, Bytes: block, DtypeBytes: 1})
	require.NoError(t, err)
	calls := make([]exec.Call, n)
	outs := make([][]byte, n)
	want := []byte{}
	for r := 0; r < n; r++ {
		in := bytes.Repeat([]byte{byte(r + 1)}, block)
		want = append(want, in...)
		outs[r] = make([]byte, n*block)
		m, err := exec.New(&plan.Ranks[r], exec.HostBuffers(in, outs[r], nil), exec.ConfigFor(plan, 0, 0))
		require.NoError(t, err)
		ts[r].NextCall()
		require.NoError(t, calls[r].Begin(m, ts[r], time.Now().Add(10*time.Second)))
	}
	for left := n; left > 0; {
		left = 0
		for r := range calls {
			done, err := calls[r].Progress(time.Time{})
			require.NoError(t, err, "rank %d", r)
			if !done {
				left++
			}
		}
	}
	for r := range outs {
		assert.True(t, bytes.Equal(want, outs[r]), "rank %d", r)
	}
}
