package team

import (
	"sync/atomic"

	"github.com/goring-hpc/goring/cudaexec"
)

// Calls under a held stream. UCC's generic triggered post (the shim's
// path for a call that cannot go on the caller's stream: PostOn refused
// it) starts an executor on the caller's stream that holds the stream
// until the call completes, before the call is posted, and at a time of
// UCC's progress. From the refusal until such a call is done, nothing of
// this process may wait for the device's queued work, and closing a CUDA
// IPC mapping does: it waited for ever (docs/gpu.md "The caller's
// stream"). So the push engines close a mapping of memory a peer freed
// only while no such call is pending anywhere in the process, and park it
// otherwise (cudaexec.Engine.SetMayWait); the parked ones are closed at
// the next post, or refusal, while none is.

// The same holds for any driver call that may wait for the device's
// queued work: cuStreamCreate did too. (Beside a kernel that waits, it
// and cuMemAlloc and cuMemHostAlloc return; cuMemFree does not:
// cuda.TestDriverCallsBesideAWaitingKernel. UCC's hold is not such a
// kernel, so that proves nothing for it.) So a team makes the streams
// its pushes and staged transfers need when it opens its GPU (Team.gpu),
// and while a call is held the engine makes none, nor the stager pinned
// memory.

// heldCalls counts the calls of every team of this process that PostOn
// refused (so UCC holds, or will hold, their stream) and that have not
// finished.
var heldCalls atomic.Int64

// noHeldCall reports whether no call of this process runs under a held
// stream: then a close cannot wait for one.
func noHeldCall() bool { return heldCalls.Load() == 0 }

// newPushEngine is a team's CUDA push engine.
func newPushEngine() *cudaexec.Engine {
	e := cudaexec.NewEngine()
	e.SetMayWait(noHeldCall)
	return e
}

// hold counts c as a call under a held stream, once: PostOn refused it;
// caller holds the team's lock.
func (c *Coll) hold() {
	if !c.heldCounted {
		heldCalls.Add(1)
		c.team.held++
		c.heldCounted = true
	}
}

// unhold ends c's count, once its call has finished or is finalized (or
// PostOn took it after all).
func (c *Coll) unhold() {
	if c.heldCounted {
		heldCalls.Add(-1)
		c.team.held--
		c.heldCounted = false
	}
}

// closeParkedMappings closes the mappings the team's engine parked, where
// no call is pending under a held stream (a post of a call that is not
// under one, or a refusal of PostOn before the call is counted).
func (t *Team) closeParkedMappings() {
	if t.engine != nil {
		t.engine.ClosePending()
	}
}
