package cexec

import (
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/ucx"
)

// TestNoEndpointNamesNoElem: a send to a peer the team has no endpoint
// for fails the call with UCS_ERR_NO_ELEM, not with a code that reads as
// an I/O error (a peer failure to whoever classifies it).
func TestNoEndpointNamesNoElem(t *testing.T) {
	j := newJob(t, 2)
	tm, err := NewTeam(j.workers[0], 0, 2, func(p int) *ucx.Endpoint {
		if p == 0 {
			return j.eps[0][0]
		}
		return nil
	})
	require.NoError(t, err)
	defer tm.Free()
	var prog sched.RankProgram
	prog.Send(1, 0, sched.At(sched.BufSrc, 0), 8, sched.Path{})
	prog.Sizes = sched.Sizes{Src: 8, Dst: 8}
	key := Key{Coll: 40, Dtype: uint8(coll.Uint8), Count: 8, Alg: "noep"}
	p, err := Lower(&prog, "noep", coll.Uint8, coll.Sum, Plain, false)
	require.NoError(t, err)
	_, err = tm.Put(key, p)
	require.NoError(t, err)
	p.Release()
	c, err := tm.NewCall(key)
	require.NoError(t, err)
	defer c.Finalize()
	err = c.Post(ptr(cBytes(t, make([]byte, 8))), ptr(cBytes(t, make([]byte, 8))))
	require.Error(t, err)
	want, _, _ := strings.Cut(ucx.ErrNoElem.Error(), " (UCS_")
	require.Contains(t, err.Error(), want)
}

// TestRecvMatchedAtPostLeavesNoRequest: a receive whose message is
// already waiting completes inside its post, and its callback frees the
// UCX request there. The op must not keep that pointer: UCX hands the
// same request to the next operation posted on the worker, here another
// call's receive, and failing the first call must not cancel it.
func TestRecvMatchedAtPostLeavesNoRequest(t *testing.T) {
	j := newJob(t, 2)
	// Rank 0's program: step 0 waits for a message that never comes (the
	// call stays running); step 1 matches one that is already there.
	var prog sched.RankProgram
	prog.Recv(1, 1, sched.At(sched.BufDst, 0), 8)
	prog.Recv(1, 0, sched.At(sched.BufDst, 8), 8)
	prog.Sizes = sched.Sizes{Src: 16, Dst: 16}
	key := Key{Coll: 41, Dtype: uint8(coll.Uint8), Count: 16, Alg: "early"}
	p, err := Lower(&prog, "early", coll.Uint8, coll.Sum, Plain, false)
	require.NoError(t, err)
	_, err = j.teams[0].Put(key, p)
	require.NoError(t, err)
	p.Release()

	// Rank 1 sends step 1's message of the first call (sequence 1) before
	// rank 0 posts; rank 0's worker takes it in as unexpected.
	tag, err := ucx.MakeTag(1, 1, 0)
	require.NoError(t, err)
	msg := cBytes(t, []byte("early!!!"))
	sreq, err := j.eps[1][0].TagSendAddr(uintptr(ptr(msg)), len(msg), ucx.MemHost, tag, nil)
	require.NoError(t, err)
	deadline := time.Now().Add(5 * time.Second)
	for !sreq.Done() {
		j.workers[1].Progress()
		j.workers[0].Progress()
		require.True(t, time.Now().Before(deadline), "the early send did not complete")
	}
	for i := 0; i < 100; i++ {
		j.workers[0].Progress()
	}

	src, dst := cBytes(t, make([]byte, 16)), cBytes(t, make([]byte, 16))
	c1, err := j.teams[0].NewCall(key)
	require.NoError(t, err)
	defer c1.Finalize()
	require.NoError(t, c1.Post(ptr(src), ptr(dst)))
	require.Equal(t, "early!!!", string(dst[8:16]), "step 1 matched the waiting message")
	require.Nil(t, unsafe.Slice(c1.c.ops, 2)[1].req, "a receive that completed inside its post keeps no UCX request")

	// A second call posts the next receive on the worker.
	src2, dst2 := cBytes(t, make([]byte, 16)), cBytes(t, make([]byte, 16))
	c2, err := j.teams[0].NewCall(key)
	require.NoError(t, err)
	defer c2.Finalize()
	require.NoError(t, c2.Post(ptr(src2), ptr(dst2)))
	c1.Fail()
	require.Equal(t, Running, c2.Test(), "failing one call must leave the other's receives alone: %v", c2.Err())
	c2.Fail()
}

// GoBusy reads back what SetGoBusy wrote, from a new team's zero on.
func TestGoBusyReadsTheWord(t *testing.T) {
	j := newJob(t, 1)
	tm, err := NewTeam(j.workers[0], 0, 1, func(int) *ucx.Endpoint { return nil })
	require.NoError(t, err)
	defer tm.Free()
	require.False(t, tm.GoBusy())
	tm.SetGoBusy(true)
	require.True(t, tm.GoBusy())
	require.EqualValues(t, 1, tm.t.go_busy, "the word C reads")
	tm.SetGoBusy(false)
	require.False(t, tm.GoBusy())
	require.EqualValues(t, 0, tm.t.go_busy)
}
