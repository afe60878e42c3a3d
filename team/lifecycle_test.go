package team

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/cexec"
	"github.com/goring-hpc/goring/coll"
)

// lifeAllreduce is a float32 sum allreduce of count elements on tm whose
// input is r*1000+k+salt; it returns the call and its output buffer.
func lifeAllreduce(t *testing.T, tm *Team, r, count, salt int) (*Coll, []byte) {
	t.Helper()
	src, dst := cbuf(t, 4*count), cbuf(t, 4*count)
	for k, v := 0, f32s(src); k < count; k++ {
		v[k] = float32(r*1000 + k + salt)
	}
	c, err := NewColl(tm, Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(dst), Count: uint64(count), Dtype: coll.Float32, Op: coll.Sum})
	require.NoError(t, err)
	return c, dst
}

// A call withdrawn (Finalize) while still queued on one rank, whose peer
// had it on the wire already: the peer's messages for it reached this
// rank's worker and are never received. The team must not hand that
// worker to the next team as clean: the next team's call of the same
// sequence number would take the stale message for its own.
func TestFinalizeQueuedCallKeepsStaleMessagesOutOfPool(t *testing.T) {
	const count = 1000
	ctxs := newLazyContexts(t, 2)
	teams := newLazyTeams(t, ctxs, 31)
	var first, second [2]*Coll
	for r, tm := range teams {
		first[r], _ = lifeAllreduce(t, tm, r, count, 1)
		second[r], _ = lifeAllreduce(t, tm, r, count, 2)
		require.NoError(t, first[r].Post())
		require.NoError(t, second[r].Post())
	}
	// Poll until one rank's first call is done: its progress starts its
	// second call at once, while the other rank's second call is queued
	// behind its unfinished first.
	fin := -1
	for polls := 0; fin < 0; polls++ {
		require.Less(t, polls, 5_000_000, "no progress")
		for r := range first {
			done, err := first[r].Test()
			require.NoError(t, err)
			if done {
				fin = r
				break
			}
		}
	}
	other := 1 - fin
	require.Equal(t, collQueued, second[other].state)
	require.Equal(t, collRunning, second[fin].state)
	// Both ranks withdraw the second call.
	second[fin].Finalize()
	second[other].Finalize()
	pollAll(t, first[other:other+1])
	for r := range first {
		first[r].Finalize()
		require.NoError(t, teams[r].Destroy())
	}
	// A new team of the same processes: its calls must be right.
	again := newLazyTeams(t, ctxs, 31)
	for i := 0; i < 3; i++ {
		allreduceOnce(t, again, count, 10+i)
	}
	for _, tm := range again {
		require.NoError(t, tm.Destroy())
	}
}

// A lazy team's call that fails on one rank when the team has connected
// (finishInit: here rank 0's missing output buffer, which nothing checks
// before the peers are in), while its peer has the call on the wire and
// sent this rank messages no call will receive. The failed call cut the
// team short as much as a withdrawn one: its workers must not go to the
// next team as clean, whose call of the same sequence number would take
// the stale messages for its own.
func TestCallFailingAtConnectKeepsStaleMessagesOutOfPool(t *testing.T) {
	const count = 1000
	ctxs := newLazyContexts(t, 2)
	teams := newLazyTeams(t, ctxs, 32)
	var calls [2]*Coll
	for r, tm := range teams {
		calls[r], _ = lifeAllreduce(t, tm, r, count, 1)
	}
	calls[0].pending.Dst = nil // this rank's call cannot be built
	for _, c := range calls {
		require.NoError(t, c.Post())
	}
	var failed error
	for polls := 0; failed == nil; polls++ {
		require.Less(t, polls, 5_000_000, "rank 0's call never failed")
		_, failed = calls[0].Test()
		done, err := calls[1].Test()
		require.NoError(t, err)
		require.False(t, done, "rank 1's call completed without rank 0")
	}
	for polls := 0; polls < 1000; polls++ {
		_, _ = calls[1].Test() // rank 1's first messages leave for rank 0
	}
	for r, c := range calls {
		c.Finalize()
		require.NoError(t, teams[r].Destroy())
	}
	newTeamIsRight(t, ctxs, 32, count, "call failed")
}

// The same for calls in the C path (docs/ucc.md "Small collectives in
// C"), which share the team's worker and never enter Go: rank 0's C
// call withdrawn in flight, whose peer then sent it what its cancelled
// call no longer receives, cut the team short, and its workers must not
// go to the next team as clean.
func TestCPathCallCutShortKeepsStaleMessagesOutOfPool(t *testing.T) {
	const n = 16
	ctxs := newLazyContexts(t, 2)
	teams := newLazyTeams(t, ctxs, 33)
	// goring.h's numbers for allreduce, float32 and sum, as cpath.c keys it.
	k := cexec.Key{Coll: 2, Dtype: 11, Op: 1, Count: n}
	var first [2]*Coll
	var args [2]Args
	for r, tm := range teams {
		first[r], _ = lifeAllreduce(t, tm, r, n, 1)
		args[r] = *first[r].pending
		require.NoError(t, first[r].Post())
	}
	lowerToCPath(t, teams, first[:], args[:], k)
	var calls [2]*cexec.Call
	for r, tm := range teams {
		call, err := tm.cpath.NewCall(k)
		require.NoError(t, err)
		calls[r] = call
		require.NoError(t, call.Post(args[r].Src, args[r].Dst))
		for i := 0; i < 1000 && call.Test() != cexec.Done; i++ {
		}
		if r == 0 {
			require.NotEqual(t, cexec.Done, call.Test(), "rank 0's C call completed alone")
			call.Fail() // withdrawn in flight, before rank 1 posted
		}
		call.Finalize()
	}
	for _, tm := range teams {
		require.NoError(t, tm.Destroy())
	}
	newTeamIsRight(t, ctxs, 33, n, "C call was cut short")
}

// lowerToCPath runs each rank's call first[r] (posted already) to its
// end, lowers it into the team's C path as the adapter does after a Go
// call, and checks every rank now has k's program.
func lowerToCPath(t *testing.T, teams []*Team, first []*Coll, args []Args, k cexec.Key) {
	t.Helper()
	pollAll(t, first)
	for r, tm := range teams {
		tm.OfferCPath(k, first[r], args[r])
		first[r].Finalize()
		require.NotNil(t, tm.cpath, "rank %d has no C path", r)
		require.True(t, tm.cpath.Has(k), "rank %d: the allreduce was not lowered", r)
	}
}

// newTeamIsRight checks that rank 0 kept its workers out of the
// context's pool, then that a new team of the same contexts (key)
// computes three allreduces of count elements right.
func newTeamIsRight(t *testing.T, ctxs []*Context, key uint32, count int, why string) {
	t.Helper()
	require.Empty(t, ctxs[0].workers.sets, "rank 0 pooled the workers of a team whose %s", why)
	again := newLazyTeams(t, ctxs, key)
	for i := 0; i < 3; i++ {
		allreduceOnce(t, again, count, 10+i)
	}
	for _, tm := range again {
		require.NoError(t, tm.Destroy())
	}
}
