package team

import (
	"fmt"
	"time"

	"github.com/goring-hpc/goring/cuda"
)

// Calls on the caller's stream. A framework orders its GPU work on
// streams, and UCC hands a collective over with the stream it belongs on
// (ucc_collective_triggered_post with a CUDA-stream execution engine): the
// collective must see what the caller queued on the stream before it, and
// what the caller queues after must see its results. A node call does
// that with no host in the way: its kernels go on the caller's stream,
// and the call completes when their done words say so
// (nodeexec.Local.BeginOn, devsync "Completion"). Any other call would need the host to wait
// for the stream first and to hold the stream until the call completes,
// which UCC's own triggered post already does for any layer (its
// executor's wait on the stream): PostOn refuses those, with a
// notSupportedErr, and the caller posts them that way.

// PostOn posts the call on stream, the caller's CUstream of the GPU that
// holds the call's buffers. It takes a node call of a team whose node
// regions are set up and that has no other call queued or running (the
// kernels must go on the stream now, at the caller's place in it, and a
// team runs its calls one at a time). Every other call is refused with a
// notSupportedErr and nothing posted. A call with nothing to move is done
// at once, as Post has it.
func (c *Coll) PostOn(stream uintptr) error {
	t := c.team
	t.mu.Lock()
	defer t.mu.Unlock()
	defer unlockC(t.lockC())
	defer t.noteBusy()
	if c.trivial || c.state == collQueued || c.state == collRunning {
		return c.post() // done at once, or Post's error
	}
	r, err := c.streamRunner()
	if err == nil {
		var s *cuda.Stream
		if s, err = r.foreignStream(stream); err == nil {
			r.on = s
		}
	}
	if err != nil {
		// UCC's generic triggered post follows, holding the stream
		// until the call completes (held.go): the parked mappings are
		// closed now, before it does, and the call counts from now on.
		t.closeParkedMappings()
		c.hold()
		return notSupportedErr{fmt.Errorf("not on the caller's stream: %w", err)}
	}
	c.unhold() // refused before the team was set up: on the stream after all
	if err := c.post(); err != nil {
		r.on = nil
		return err
	}
	if r.on != nil {
		// The team was idle, so the call began in post: this is a bug.
		r.on = nil
		return fmt.Errorf("a call on the caller's stream did not begin at its post")
	}
	return nil
}

// streamRunner is the call's node runner if it can run on the caller's
// stream now (PostOn), or why not.
func (c *Coll) streamRunner() (*nodeRunner, error) {
	t := c.team
	r, ok := c.run.(*nodeRunner)
	switch {
	case c.pending != nil:
		return nil, fmt.Errorf("the team's first call")
	case !ok:
		return nil, fmt.Errorf("the call runs as %q, not the node kernels", c.runnerName())
	case t.node == nil || !t.node.ready || t.node.off != nil || t.node.local == nil:
		return nil, fmt.Errorf("the team's node regions are not set up")
	case t.cur != nil || len(t.queue) > 0:
		return nil, fmt.Errorf("an earlier call of the team is in flight")
	case c.earlierHeld():
		return nil, fmt.Errorf("an earlier call of the team waits for UCC to post it")
	}
	return r, nil
}

// An earlier call that PostOn refused is posted by UCC's generic
// triggered post when the caller's stream reaches it, after PostOn has
// returned, and its executor holds the stream until the call completes.
// A later call taken on the stream meanwhile would begin first, on this
// rank alone where the peers took the earlier one on time (or refused
// both), and its kernels would wait on the stream behind that hold while
// the earlier call waits behind it in the team's queue: so while one
// waits for its post, PostOn and PrepareStream refuse the calls after
// it (while it is held: refused and not done), which then follow it
// through UCC's post in order.

// earlierHeld says whether another call of c's team is under a held
// stream (held.go): refused by PostOn and not done. Until UCC posts it,
// it is neither the team's current call nor queued.
func (c *Coll) earlierHeld() bool {
	n := c.team.held
	if c.heldCounted {
		n--
	}
	return n > 0
}

// foreignStream wraps the caller's stream handle for the node kernels'
// GPU, reusing the last wrapping while the caller posts on one stream.
func (r *nodeRunner) foreignStream(handle uintptr) (*cuda.Stream, error) {
	n := r.c.team.node
	if n.streamHandle == handle && n.stream != nil {
		return n.stream, nil
	}
	s, err := r.c.gpu.g.Device().ForeignStream(handle)
	if err != nil {
		return nil, err
	}
	n.stream, n.streamHandle = s, handle
	return s, nil
}

// PrepareStream readies the team so that PostOn takes this call, where
// PostOn refuses it only because the team has not set itself up yet: a
// lazy team not connected, or node regions not made and mapped (the
// team's first calls). It runs that set-up now and blocks until it is
// done, moving no data, and reports whether PostOn takes the call. Any
// other refusal (host memory, not a node call, a call in flight) returns
// false at once. Every rank must call it at the same call, as every rank
// posts it: the set-up exchanges are collective, and every rank sees the
// same reason to run them.
//
// Why block, rather than hand the call to UCC's generic triggered post:
// that holds the caller's stream (an executor's wait) while the call
// runs, and the set-up allocates, clears and maps GPU memory, which the
// driver may order behind the held stream, so the job waits on itself.
// ucc_perftest -T hung at its first call that way on two H200s
// (docs/gpu.md "The caller's stream").
func (c *Coll) PrepareStream() (bool, error) {
	for {
		ready, more, err := c.prepareStep()
		if err != nil || !more {
			return ready, err
		}
		time.Sleep(2 * time.Microsecond)
	}
}

// prepareStep is one step of PrepareStream: ready says PostOn takes the
// call, more that the set-up is still running.
func (c *Coll) prepareStep() (ready, more bool, err error) {
	t := c.team
	t.mu.Lock()
	defer t.mu.Unlock()
	defer unlockC(t.lockC())
	defer t.noteBusy()
	if r, ok := c.run.(*nodeRunner); ok && r.prepOnly {
		// The set-up pass is posted: progress it to its end.
		t.progress()
		if c.state == collQueued || c.state == collRunning {
			return false, true, nil
		}
		r.prepOnly, r.prepDone = false, false
		if c.state == collFailed {
			return false, false, c.err
		}
		c.state = collInit
		_, why := c.streamRunner()
		return why == nil, false, nil
	}
	switch {
	case c.state == collQueued || c.state == collRunning:
		return false, false, Invalid("collective prepared while in flight")
	case c.trivial:
		return true, false, nil // PostOn completes it at once
	case t.cur != nil || len(t.queue) > 0 || c.earlierHeld():
		return false, false, nil
	case c.pending != nil:
		if mem, err := memoryOf(*c.pending); err != nil || mem.IsHost() {
			return false, false, err
		}
		if t.tr == nil {
			t.progress() // the lazy team's card exchange
			if t.link != nil && t.link.err != nil {
				return false, false, t.link.err
			}
			return false, true, nil
		}
		if !c.finishInit() {
			if c.state == collFailed {
				return false, false, c.err
			}
			return true, false, nil // nothing to move
		}
		return false, true, nil
	}
	r, ok := c.run.(*nodeRunner)
	switch {
	case !ok:
		return false, false, nil
	case t.node != nil && t.node.ready:
		_, why := c.streamRunner()
		return why == nil, false, nil
	}
	r.prepOnly = true
	if err := c.post(); err != nil {
		r.prepOnly = false
		return false, false, err
	}
	return false, true, nil
}
