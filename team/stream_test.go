package team

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/nodeexec"
)

// A call that is not a node call is refused on the caller's stream with
// nothing posted (the caller then posts it as usual, under the stream
// UCC holds, counted as such until it is done, and it runs right);
// a call with nothing to move is done at once. The stream handle is never
// touched for these: no GPU is needed. The node calls on a stream:
// TestNodeCallsOnCallersStream.
func TestPostOnRefusesWhatIsNotANodeCall(t *testing.T) {
	const n, count = 3, 1001
	teams := newTestTeams(t, n, "")
	srcs, dsts := make([][]byte, n), make([][]byte, n)
	colls := make([]*Coll, n)
	for r, tm := range teams {
		srcs[r], dsts[r] = cbuf(t, 4*count), cbuf(t, 4*count)
		for i, v := range f32s(srcs[r]) {
			f32s(srcs[r])[i] = v + float32(r+i%3)
		}
		c, err := NewColl(tm, Args{Coll: coll.Allreduce, Src: ptr(srcs[r]), Dst: ptr(dsts[r]), Count: count, Dtype: coll.Float32, Op: coll.Sum})
		require.NoError(t, err)
		t.Cleanup(c.Finalize)
		colls[r] = c
		err = c.PostOn(0xdead0000) // never dereferenced: the call is refused first
		assert.Equal(t, StatusNotSupported, StatusOf(err), "rank %d: %v", r, err)
		ready, err := c.PrepareStream() // nothing to set up: false at once
		assert.False(t, ready, "rank %d", r)
		assert.NoError(t, err, "rank %d", r)
		assert.Equal(t, collInit, c.state, "rank %d: a refused call stays unposted", r)
		assert.True(t, c.heldCounted, "rank %d: UCC will hold the stream for the call", r)
	}
	// Each refused call counts until it is done (held.go).
	require.Equal(t, int64(n), heldCalls.Load())
	runColls(t, n, func(r int) (*Coll, error) { return colls[r], nil })
	assert.Zero(t, heldCalls.Load(), "every held call done")
	for r := range teams {
		for i, v := range f32s(dsts[r]) {
			require.Equal(t, float32(n*(n-1)/2+n*(i%3)), v, "rank %d element %d", r, i)
		}
	}
	// Nothing to move: done at once, on a stream or not.
	c, err := NewColl(teams[0], Args{Coll: coll.Allreduce, Src: ptr(srcs[0]), Dst: ptr(dsts[0]), Count: 0, Dtype: coll.Float32, Op: coll.Sum})
	require.NoError(t, err)
	defer c.Finalize()
	require.NoError(t, c.PostOn(0xdead0000))
	done, err := c.Test()
	assert.True(t, done)
	assert.NoError(t, err)
}

// A lazy team's first host call: PrepareStream answers at once, without
// connecting the team (a host call never goes on a stream), and the call
// then runs as usual.
func TestPrepareStreamLeavesHostCallsOfLazyTeams(t *testing.T) {
	ctxs := newLazyContexts(t, 2)
	teams := newLazyTeams(t, ctxs, 9)
	for r, tm := range teams {
		src, dst := cbuf(t, 4*64), cbuf(t, 4*64)
		c, err := NewColl(tm, Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(dst), Count: 64, Dtype: coll.Float32, Op: coll.Sum})
		require.NoError(t, err)
		ready, err := c.PrepareStream()
		assert.False(t, ready, "rank %d", r)
		assert.NoError(t, err, "rank %d", r)
		assert.Nil(t, tm.tr, "rank %d: PrepareStream connected the team for a host call", r)
		c.Finalize()
	}
	allreduceOnce(t, teams, 64, 1)
	for _, tm := range teams {
		require.NoError(t, tm.Destroy())
	}
}

// A call PostOn refused is posted later, by UCC, when the caller's stream
// reaches it. Until then a later call of the team must not go on the
// stream (it would begin first on this rank, and its kernels would wait
// behind UCC's hold for the earlier call, which waits behind it), nor run
// the team's set-up exchange (the peers run the earlier call first). The
// later call stands in for a node call (a node runner over a team whose
// regions are set up, then over one whose are not): no GPU is needed, as
// it is refused before either is touched. The earlier call then runs
// right on every rank.
func TestPostOnRefusesACallBehindOneAwaitingItsPost(t *testing.T) {
	const n, count = 2, 257
	teams := newTestTeams(t, n, "")
	srcs, dsts := make([][]byte, n), make([][]byte, n)
	first := make([]*Coll, n)
	args := func(r int) Args {
		return Args{Coll: coll.Allreduce, Src: ptr(srcs[r]), Dst: ptr(dsts[r]), Count: count, Dtype: coll.Float32, Op: coll.Sum}
	}
	for r, tm := range teams {
		srcs[r], dsts[r] = cbuf(t, 4*count), cbuf(t, 4*count)
		for i := range f32s(srcs[r]) {
			f32s(srcs[r])[i] = float32(r + i%5)
		}
		c, err := NewColl(tm, args(r))
		require.NoError(t, err)
		first[r] = c
		require.Equal(t, StatusNotSupported, StatusOf(c.PostOn(0xdead0000)), "rank %d", r)
	}
	tm := teams[0]
	node := tm.node
	later, err := NewColl(tm, args(0))
	require.NoError(t, err)
	own := later.run
	t.Cleanup(func() {
		if later.state == collInit { // else the stand-in runs: withdrawn as such
			later.run = own
		}
		later.Finalize()
	})
	later.run = &nodeRunner{c: later, setup: &nodeSetup{phase: 1}}
	tm.node = &nodeState{local: new(nodeexec.Local), ready: true}
	_, why := later.streamRunner()
	assert.Error(t, why, "taken on the stream ahead of a call awaiting its post")

	tm.node = &nodeState{} // regions not made: PrepareStream would set them up
	ready, more, err := later.prepareStep()
	require.NoError(t, err)
	require.False(t, more, "set-up exchange begun ahead of a call awaiting its post")
	require.False(t, ready)
	require.Nil(t, tm.cur, "set-up exchange begun ahead of a call awaiting its post")

	tm.node = &nodeState{local: new(nodeexec.Local), ready: true}
	require.Equal(t, StatusNotSupported, StatusOf(later.PostOn(0xdead0000)))
	assert.Equal(t, collInit, later.state)
	tm.node = node
	later.run = own

	runColls(t, n, func(r int) (*Coll, error) { return first[r], nil })
	for r := range teams {
		for i, v := range f32s(dsts[r]) {
			require.Equal(t, float32(n*(n-1)/2+n*(i%5)), v, "rank %d element %d", r, i)
		}
	}
	// Once the earlier call is posted, nothing waits ahead of the later one.
	tm.node = &nodeState{local: new(nodeexec.Local), ready: true}
	later.run = &nodeRunner{c: later}
	_, why = later.streamRunner()
	assert.NoError(t, why)
	tm.node = node
	later.run = own
}
