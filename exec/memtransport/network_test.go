package memtransport

import (
	"errors"
	"testing"
	"time"

	"github.com/goring-hpc/goring/exec"
	"github.com/stretchr/testify/require"
)

func waitAll(t *testing.T, ep *Endpoint, n int) []exec.Completion {
	t.Helper()
	var got []exec.Completion
	deadline := time.Now().Add(2 * time.Second)
	for len(got) < n && time.Now().Before(deadline) {
		var err error
		got, err = ep.Wait(deadline, got)
		require.NoError(t, err)
	}
	require.Len(t, got, n)
	return got
}

func byToken(cs []exec.Completion) map[uint64]exec.Completion {
	m := map[uint64]exec.Completion{}
	for _, c := range cs {
		m[c.Token] = c
	}
	return m
}

// Sends and receives of one (sender, receiver, tag) pair in post order,
// whatever the protocol and however completions are shuffled.
func TestMatchingOrderPerTriple(t *testing.T) {
	for i, opts := range []Options{{}, {Eager: true}, {Reorder: true, Seed: 9, MaxDelay: time.Millisecond}} {
		net := New(2, opts)
		a, b := net.Endpoint(0), net.Endpoint(1)
		x, y, z := make([]byte, 3), make([]byte, 3), make([]byte, 3)
		recvFirst := i%2 == 0
		if recvFirst {
			require.NoError(t, b.PostRecv(&exec.Post{Peer: 0, Tag: 4, Buf: exec.HostRegion(x), Token: 10}))
			require.NoError(t, b.PostRecv(&exec.Post{Peer: 0, Tag: 4, Buf: exec.HostRegion(y), Token: 11}))
			require.NoError(t, b.PostRecv(&exec.Post{Peer: 0, Tag: 5, Buf: exec.HostRegion(z), Token: 12}))
		}
		require.NoError(t, a.PostSend(&exec.Post{Peer: 1, Tag: 5, Buf: exec.HostRegion([]byte("ccc")), Token: 3}))
		require.NoError(t, a.PostSend(&exec.Post{Peer: 1, Tag: 4, Buf: exec.HostRegion([]byte("aaa")), Token: 1}))
		require.NoError(t, a.PostSend(&exec.Post{Peer: 1, Tag: 4, Buf: exec.HostRegion([]byte("bbb")), Token: 2}))
		if !recvFirst {
			require.NoError(t, b.PostRecv(&exec.Post{Peer: 0, Tag: 4, Buf: exec.HostRegion(x), Token: 10}))
			require.NoError(t, b.PostRecv(&exec.Post{Peer: 0, Tag: 4, Buf: exec.HostRegion(y), Token: 11}))
			require.NoError(t, b.PostRecv(&exec.Post{Peer: 0, Tag: 5, Buf: exec.HostRegion(z), Token: 12}))
		}
		got := byToken(waitAll(t, b, 3))
		require.Equal(t, "aaa", string(x), "case %d", i)
		require.Equal(t, "bbb", string(y), "case %d", i)
		require.Equal(t, "ccc", string(z), "case %d", i)
		for _, tok := range []uint64{10, 11, 12} {
			require.Equal(t, int64(3), got[tok].Len, "case %d token %d", i, tok)
			require.NoError(t, got[tok].Err)
		}
		require.Len(t, byToken(waitAll(t, a, 3)), 3, "case %d: every send completes", i)
		require.Zero(t, net.Pending(), "case %d", i)
	}
}

func TestTruncationNeverOverruns(t *testing.T) {
	for i, opts := range []Options{{}, {Eager: true}} {
		net := New(2, opts)
		mem := []byte("....####")
		require.NoError(t, net.Endpoint(1).PostRecv(&exec.Post{Peer: 0, Tag: 0, Buf: exec.HostRegion(mem[:4]), Token: 7}))
		require.NoError(t, net.Endpoint(0).PostSend(&exec.Post{Peer: 1, Tag: 0, Buf: exec.HostRegion([]byte("abcdef")), Token: 8}))
		c := waitAll(t, net.Endpoint(1), 1)[0]
		require.ErrorIs(t, c.Err, ErrTruncated, "case %d", i)
		require.Equal(t, int64(6), c.Len, "case %d", i)
		require.Equal(t, "abcd####", string(mem), "case %d: bytes past the receive untouched", i)
	}
}

func TestWaitDeadlineCancelAbort(t *testing.T) {
	net := New(3, Options{})
	a, b := net.Endpoint(0), net.Endpoint(1)
	// Different tags never match; Wait returns empty at its deadline.
	buf := make([]byte, 2)
	require.NoError(t, b.PostRecv(&exec.Post{Peer: 0, Tag: 1, Buf: exec.HostRegion(buf), Token: 5}))
	require.NoError(t, a.PostSend(&exec.Post{Peer: 1, Tag: 2, Buf: exec.HostRegion([]byte("zz")), Token: 6}))
	start := time.Now()
	got, err := b.Wait(start.Add(30*time.Millisecond), nil)
	require.NoError(t, err)
	require.Empty(t, got)
	require.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
	require.Equal(t, 2, net.Pending())
	// A cancelled receive is withdrawn: a matching send stays queued and
	// the buffer is never written.
	require.NoError(t, b.Cancel(5))
	require.NoError(t, b.Cancel(12345), "unknown tokens are a no-op")
	require.NoError(t, a.PostSend(&exec.Post{Peer: 1, Tag: 1, Buf: exec.HostRegion([]byte("yy")), Token: 7}))
	require.Equal(t, []byte{0, 0}, buf)
	require.Equal(t, 2, net.Pending())
	// Abort wakes a waiting rank with the job's error.
	boom := errors.New("rank 2 died")
	go func() {
		time.Sleep(20 * time.Millisecond)
		net.Abort(boom)
	}()
	_, err = net.Endpoint(2).Wait(time.Now().Add(5*time.Second), nil)
	require.ErrorIs(t, err, boom)
	net.Reset()
	require.Zero(t, net.Pending())
	// Peers out of range are refused at post time.
	require.ErrorContains(t, a.PostSend(&exec.Post{Peer: 3, Tag: 0, Buf: exec.HostRegion(nil), Token: 1}), "peer 3 is not in [0, 3)")
	require.ErrorContains(t, a.PostRecv(&exec.Post{Peer: -1, Tag: 0, Buf: exec.HostRegion(nil), Token: 1}), "peer -1")
}

// Delays hold completions back: with a 30 ms maximum, some of many
// completions arrive late, and all arrive.
func TestDelays(t *testing.T) {
	net := New(2, Options{Seed: 1, MaxDelay: 30 * time.Millisecond})
	for k := 0; k < 20; k++ {
		require.NoError(t, net.Endpoint(1).PostRecv(&exec.Post{Peer: 0, Tag: 0, Buf: exec.HostRegion(make([]byte, 1)), Token: uint64(k)}))
		require.NoError(t, net.Endpoint(0).PostSend(&exec.Post{Peer: 1, Tag: 0, Buf: exec.HostRegion([]byte{1}), Token: uint64(k)}))
	}
	got, err := net.Endpoint(1).Wait(time.Now(), nil)
	require.NoError(t, err)
	require.Less(t, len(got), 20, "some completions must still be delayed")
	require.Len(t, waitAll(t, net.Endpoint(1), 20-len(got)), 20-len(got))
}
