package team

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/nodeexec"
)

// kernelCall makes a node call in its kernel the current call of tm, as
// Post leaves one: the C path told that Go is busy. Its nodeexec.Local
// runs nothing, so the call ends at its next poll.
func kernelCall(tm *Team) *Coll {
	tm.node = &nodeState{local: &nodeexec.Local{}, ready: true}
	c := &Coll{team: tm, state: collRunning}
	c.run = &nodeRunner{c: c}
	tm.cur = c
	tm.cpath.SetGoBusy(true)
	return c
}

// A Test of a node call in its kernel takes the C lock only to tell C
// that Go's call has ended (nodepoll.go), and does tell it; one that has
// nothing to tell C takes no lock at all.
func TestNodeKernelPollTakesTheCLockOnlyToTellC(t *testing.T) {
	tm := newTestTeams(t, 1, "")[0]
	require.NotNil(t, tm.cpath, "the team has a C path")
	t.Cleanup(func() { tm.node = nil })

	c := kernelCall(tm)
	before := tm.cLocks
	done, err := c.Test()
	require.NoError(t, err)
	require.True(t, done)
	assert.Nil(t, tm.cur)
	assert.False(t, tm.cpath.GoBusy(), "C learns that Go has no call")
	assert.Equal(t, before+1, tm.cLocks, "the C lock taken once, for the word")

	c = kernelCall(tm)
	tm.cpath.SetGoBusy(false) // as if C knew already
	before = tm.cLocks
	done, err = c.Test()
	require.NoError(t, err)
	require.True(t, done)
	assert.Equal(t, before, tm.cLocks, "nothing to tell C: no lock")

	// The test of a call that is not a node kernel's takes it.
	c = kernelCall(tm)
	c.run = nil
	c.state = collDone
	tm.cur = nil
	before = tm.cLocks
	done, err = c.Test()
	require.NoError(t, err)
	require.True(t, done)
	assert.Equal(t, before+1, tm.cLocks)
}

// Only a node call in its kernel, alone on its team, is polled without
// the C lock and without its GPU made current; its set-up exchanges, a
// call behind it and a call of another runner are not.
func TestPollsKernelOnly(t *testing.T) {
	tm := newTestTeams(t, 1, "")[0]
	t.Cleanup(func() { tm.node, tm.cur, tm.queue = nil, nil, nil })
	c := kernelCall(tm)
	assert.True(t, tm.pollsKernelOnly())
	assert.True(t, c.inKernel())
	assert.True(t, c.startsKernelOnly())

	c.run.(*nodeRunner).setup = &nodeSetup{phase: 1}
	assert.False(t, tm.pollsKernelOnly(), "the set-up exchange sends messages")
	assert.False(t, c.inKernel())
	c.run.(*nodeRunner).setup = nil

	tm.queue = []*Coll{{team: tm, state: collQueued}}
	assert.False(t, tm.pollsKernelOnly(), "the call behind starts in this progress")
	tm.queue = nil

	c.state = collQueued
	assert.False(t, tm.pollsKernelOnly(), "not begun")
	c.state = collRunning

	tm.node.ready = false
	assert.False(t, c.startsKernelOnly(), "its Begin runs the set-up exchange")
	tm.node.ready = true
	tm.node.off = errPeerFailed
	assert.False(t, c.startsKernelOnly(), "its Begin falls back to messages")
	tm.node.off = nil

	c.run = &machineRunner{}
	assert.False(t, tm.pollsKernelOnly())
	assert.False(t, c.inKernel())
	assert.False(t, c.startsKernelOnly())
}

// countingWatch counts its checks, each due at once (Every 0), and fails
// those from fail on.
type countingWatch struct {
	checks, fail int
}

func (w *countingWatch) Every() time.Duration { return 0 }

func (w *countingWatch) Check() error {
	w.checks++
	if w.fail > 0 && w.checks >= w.fail {
		return errPeerFailed
	}
	return nil
}

// A node kernel's polls without a deadline read the clock for the watch
// once every nodeClockEvery polls, and still find a dead peer; with a
// deadline every poll reads it, and the first poll past the deadline
// fails the call.
func TestNodeKernelClock(t *testing.T) {
	opts, err := parseOptions("")
	require.NoError(t, err)
	w := &countingWatch{}
	tm := &Team{ctx: &Context{opts: opts}, watch: w, node: &nodeState{local: &nodeexec.Local{}}}
	c := &Coll{team: tm, alg: "node_test"}
	r := &nodeRunner{c: c, launched: time.Now()}
	r.checked = r.launched
	for range 3 * nodeClockEvery {
		require.NoError(t, r.checkPeers())
	}
	assert.Equal(t, 3, w.checks, "a look every %d polls", nodeClockEvery)

	w.fail = w.checks + 1
	var failed int
	for i := 1; i <= nodeClockEvery; i++ {
		if err := r.checkPeers(); err != nil {
			require.ErrorIs(t, err, errPeerFailed)
			failed = i
			break
		}
	}
	assert.Equal(t, nodeClockEvery, failed, "the dead peer found at the next look")
	assert.ErrorIs(t, tm.node.off, errPeerFailed, "the node path ends with it")

	// A deadline: every poll compares the clock with it.
	w2 := &countingWatch{}
	tm2 := &Team{ctx: &Context{opts: opts}, watch: w2, node: &nodeState{local: &nodeexec.Local{}}}
	r2 := &nodeRunner{c: &Coll{team: tm2, alg: "node_test"}, launched: time.Now()}
	r2.checked = r2.launched
	r2.deadline = r2.launched.Add(time.Hour)
	require.NoError(t, r2.checkPeers())
	require.NoError(t, r2.checkPeers())
	assert.Equal(t, 2, w2.checks, "with a deadline the watch is looked at on every due poll")
	r2.deadline = r2.launched // passed
	err = r2.checkPeers()
	require.ErrorIs(t, err, exec.ErrDeadline, "the first poll past the deadline")
	assert.Contains(t, err.Error(), "node kernel node_test")
}
