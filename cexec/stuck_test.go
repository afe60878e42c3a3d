package cexec

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// stuckBytes is the bcast of stuckBcast: large enough that UCX sends it
// by rendezvous, which it does not cancel.
const stuckBytes = 1 << 20

// stuckBcast is a job of two ranks and the plan, algorithm and key of a
// bcast of stuckBytes bytes from rank 0 between them.
func stuckBcast(t *testing.T) (*job, *sched.Plan, string, Key) {
	t.Helper()
	const n = 2
	j := newJob(t, n)
	tp, err := topo.Synthetic("t2", 1, n, 1)
	require.NoError(t, err)
	alg := sched.Algorithms(coll.Bcast)[0].Name
	plan, err := sched.Generate(sched.Spec{Collective: coll.Bcast, Algorithm: alg, Topo: tp, Bytes: stuckBytes, DtypeBytes: 1})
	require.NoError(t, err)
	return j, plan, alg, Key{Coll: 4, Dtype: uint8(coll.Uint8), Count: stuckBytes, Alg: alg}
}

// TestFinalizedCallKeepsItsProgram: a call failed while UCX holds one of
// its sends (a rendezvous send to a peer that never receives, which UCX
// does not cancel) is finalized with that request still out. Its
// completion comes later, after the team let go of its programs, and
// reads the call's program: the call must hold the program until then,
// and give it back when the request completes. (Under go test -asan the
// completion read the freed program: heap-use-after-free.)
func TestFinalizedCallKeepsItsProgram(t *testing.T) {
	const B = stuckBytes
	j, plan, alg, key := stuckBcast(t)
	p, err := Lower(&plan.Ranks[0], alg, coll.Uint8, coll.Sum, OneBuffer, false)
	require.NoError(t, err)
	defer p.Release()
	_, err = j.teams[0].Put(key, p)
	require.NoError(t, err)
	c, err := j.teams[0].NewCall(key)
	require.NoError(t, err)
	require.NoError(t, c.Post(nil, ptr(cBytes(t, make([]byte, B)))))
	for i := 0; i < 100; i++ {
		require.Equal(t, Running, c.Test())
	}
	c.Fail()
	if c.c.due == 0 {
		t.Skip("this UCX cancelled the rendezvous send: nothing outlives the call")
	}
	c.Finalize()
	require.EqualValues(t, 3, p.p.refs, "the caller's, the cache's and the finalized call's, whose send UCX holds")

	// The team lets go of its programs; then the peer receives, and the
	// send completes on rank 0's worker.
	j.teams[0].Free()
	require.EqualValues(t, 2, p.p.refs)
	p1, err := Lower(&plan.Ranks[1], alg, coll.Uint8, coll.Sum, OneBuffer, false)
	require.NoError(t, err)
	_, err = j.teams[1].Put(key, p1)
	require.NoError(t, err)
	p1.Release()
	c1, err := j.teams[1].NewCall(key)
	require.NoError(t, err)
	require.NoError(t, c1.Post(nil, ptr(cBytes(t, make([]byte, B)))))
	deadline := time.Now().Add(10 * time.Second)
	for c1.Test() != Done || p.p.refs != 1 {
		j.workers[0].Progress()
		require.True(t, time.Now().Before(deadline), "the peer's receive or the send's completion did not come in 10 s (refs %d)", p.p.refs)
	}
	c1.Finalize()
}

// TestRepostWhileUCXHoldsTheLastPost: a failed call may be posted again
// (the Go path allows a post after a failure), but not while UCX still
// holds a request of its previous post: that request's completion would
// land on the op records the new post reuses, and count as the new
// call's. Here the first post's send, which UCX did not cancel, is
// received by the peer's call of the same sequence number; the repost's
// own send (the next sequence number) is never received, so the repost
// must not report the call done. The post is refused instead.
func TestRepostWhileUCXHoldsTheLastPost(t *testing.T) {
	const B = stuckBytes
	j, plan, alg, key := stuckBcast(t)
	for r := range plan.Ranks {
		p, err := Lower(&plan.Ranks[r], alg, coll.Uint8, coll.Sum, OneBuffer, false)
		require.NoError(t, err)
		_, err = j.teams[r].Put(key, p)
		require.NoError(t, err)
		p.Release()
	}
	c, err := j.teams[0].NewCall(key)
	require.NoError(t, err)
	defer c.Finalize()
	buf := cBytes(t, make([]byte, B))
	require.NoError(t, c.Post(nil, ptr(buf)))
	for i := 0; i < 100; i++ {
		require.Equal(t, Running, c.Test())
	}
	c.Fail()
	if c.c.due == 0 {
		t.Skip("this UCX cancelled the rendezvous send: nothing outlives the call")
	}
	err = c.Post(nil, ptr(buf))
	if err != nil {
		require.Equal(t, Failed, c.Test(), "a refused post leaves the call failed")
		require.ErrorContains(t, c.Err(), "posted again while UCX still holds")
	}
	// The peer receives the first post's message (its call takes sequence
	// number 1, as the first post did).
	c1, err := j.teams[1].NewCall(key)
	require.NoError(t, err)
	defer c1.Finalize()
	require.NoError(t, c1.Post(nil, ptr(cBytes(t, make([]byte, B)))))
	deadline := time.Now().Add(10 * time.Second)
	for c1.Test() != Done {
		j.workers[0].Progress()
		require.True(t, time.Now().Before(deadline), "the peer's receive did not complete in 10 s")
	}
	for i := 0; i < 1000; i++ {
		require.NotEqual(t, Done, c.Test(), "the repost is done though no peer received its message")
	}
}
