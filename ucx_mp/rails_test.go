package ucxmp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/ucx"
)

// twoNodeRails builds ranks 0 and 1 on two "nodes" with two rails each,
// every worker on one in-process shared-memory context: rank r owns rail
// r. The routing, not the wire, is under test (the namespace testbed's CI
// test runs the wire: cmd/goring TestBenchNetnsSmall).
func twoNodeRails(t *testing.T) []*Rails {
	t.Helper()
	if err := ucx.Load(); err != nil {
		t.Skipf("UCX not loadable: %v", err)
	}
	ctx, err := ucx.Init(ucx.Options{Config: map[string]string{"TLS": "self,sm"}})
	require.NoError(t, err)
	const ranks, rails = 2, 2
	ws := make([][]*ucx.Worker, ranks) // ws[rank][0]: local, [1+r]: rail r
	addr := make([][][]byte, ranks)
	for p := range ws {
		for w := 0; w <= rails; w++ {
			wk, err := ctx.NewWorker(ucx.WorkerOptions{})
			require.NoError(t, err)
			a, err := wk.Address()
			require.NoError(t, err)
			ws[p] = append(ws[p], wk)
			addr[p] = append(addr[p], a)
		}
	}
	out := make([]*Rails, ranks)
	var trs []*Transport
	for p := 0; p < ranks; p++ {
		local := make([][]byte, ranks)
		local[p] = addr[p][0]
		lt, err := New(ws[p][0], p, local, Options{})
		require.NoError(t, err)
		trs = append(trs, lt)
		var rt []*Transport
		for r := 0; r < rails; r++ {
			peers := make([][]byte, ranks)
			peers[1-p] = addr[1-p][1+r]
			tr, err := New(ws[p][1+r], p, peers, Options{})
			require.NoError(t, err)
			rt = append(rt, tr)
			trs = append(trs, tr)
		}
		me := p
		out[p], err = NewRails(p, lt, rt, func(peer int) bool { return peer == me }, func(rank int) int { return rank })
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		for _, tr := range trs {
			_ = tr.Close()
		}
		for _, row := range ws {
			for _, w := range row {
				_ = w.Close()
			}
		}
		_ = ctx.Close()
	})
	return out
}

// A message between nodes travels on the sender's rail both ways (the
// receive is posted where it arrives), hinted or not; a hint naming another
// rail is refused at post time.
func TestRailsRouteBySendersRail(t *testing.T) {
	rs := twoNodeRails(t)
	a, b := []byte("from rank 0 on rail 0"), []byte("from rank 1 on rail 1")
	gotA, gotB := make([]byte, len(a)), make([]byte, len(b))
	require.NoError(t, rs[1].PostRecv(&exec.Post{Peer: 0, Tag: 7, Buf: exec.HostRegion(gotA), Token: 1}))
	require.NoError(t, rs[0].PostRecv(&exec.Post{Peer: 1, Tag: 7, Buf: exec.HostRegion(gotB), Token: 2}))
	require.NoError(t, rs[0].PostSend(&exec.Post{Peer: 1, Tag: 7, Buf: exec.HostRegion(a), Token: 3, Path: sched.Path{Kind: sched.PathRail, Index: 0}}))
	require.NoError(t, rs[1].PostSend(&exec.Post{Peer: 0, Tag: 7, Buf: exec.HostRegion(b), Token: 4}))
	var c0, c1 []exec.Completion
	deadline := time.Now().Add(5 * time.Second)
	for (len(c0) < 2 || len(c1) < 2) && time.Now().Before(deadline) {
		var err error
		c0, err = rs[0].Wait(time.Now().Add(time.Millisecond), c0)
		require.NoError(t, err)
		c1, err = rs[1].Wait(time.Now().Add(time.Millisecond), c1)
		require.NoError(t, err)
	}
	require.Len(t, c0, 2)
	require.Len(t, c1, 2)
	assert.Equal(t, a, gotA)
	assert.Equal(t, b, gotB)

	err := rs[0].PostSend(&exec.Post{Peer: 1, Tag: 8, Buf: exec.HostRegion(a), Token: 5, Path: sched.Path{Kind: sched.PathRail, Index: 1}})
	assert.ErrorContains(t, err, "hinted rail 1, but this rank's rail is 0")
}

// Wait with nothing posted sleeps until the deadline and returns nothing.
func TestRailsWaitIdle(t *testing.T) {
	rs := twoNodeRails(t)
	start := time.Now()
	got, err := rs[0].Wait(start.Add(30*time.Millisecond), nil)
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
}

// railsMesh builds the testbed's data plane for nodes x ppn ranks in this
// process: per rank a local transport to the ranks of its node and one
// transport per rail to the others, every worker on one shared-memory
// context (the routing and the memory paths are under test, not the
// wire). railOf names a rank's rail; local(r) and rail(r) are the options
// of rank r's local and rail transports.
func railsMesh(t *testing.T, nodes, ppn, rails int, railOf func(int) int, local, rail func(r int) Options) []*Rails {
	t.Helper()
	if err := ucx.Load(); err != nil {
		t.Skipf("UCX not loadable: %v", err)
	}
	ctx, err := ucx.Init(ucx.Options{Config: map[string]string{"TLS": "self,sm"}})
	require.NoError(t, err)
	n := nodes * ppn
	ws := make([][]*ucx.Worker, n) // ws[rank][0]: local, [1+r]: rail r
	addr := make([][][]byte, n)
	for p := range ws {
		for w := 0; w <= rails; w++ {
			wk, err := ctx.NewWorker(ucx.WorkerOptions{})
			require.NoError(t, err)
			a, err := wk.Address()
			require.NoError(t, err)
			ws[p] = append(ws[p], wk)
			addr[p] = append(addr[p], a)
		}
	}
	out := make([]*Rails, n)
	var trs []*Transport
	for p := 0; p < n; p++ {
		node := p / ppn
		same := func(q int) bool { return q/ppn == node }
		la := make([][]byte, n)
		for q := range n {
			if same(q) {
				la[q] = addr[q][0]
			}
		}
		lt, err := New(ws[p][0], p, la, local(p))
		require.NoError(t, err)
		trs = append(trs, lt)
		var rt []*Transport
		for r := 0; r < rails; r++ {
			ra := make([][]byte, n)
			for q := range n {
				if !same(q) {
					ra[q] = addr[q][1+r]
				}
			}
			tr, err := New(ws[p][1+r], p, ra, rail(p))
			require.NoError(t, err)
			rt = append(rt, tr)
			trs = append(trs, tr)
		}
		out[p], err = NewRails(p, lt, rt, same, railOf)
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		for _, tr := range trs {
			_ = tr.Close()
		}
		for _, row := range ws {
			for _, w := range row {
				_ = w.Close()
			}
		}
		_ = ctx.Close()
	})
	return out
}
