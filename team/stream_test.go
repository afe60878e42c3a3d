package team

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
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
