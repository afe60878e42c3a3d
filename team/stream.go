package team

import (
	"fmt"

	"github.com/goring-hpc/goring/cuda"
)

// Calls on the caller's stream. A framework orders its GPU work on
// streams, and UCC hands a collective over with the stream it belongs on
// (ucc_collective_triggered_post with a CUDA-stream execution engine): the
// collective must see what the caller queued on the stream before it, and
// what the caller queues after must see its results. A node call does
// that with no host in the way: its kernels go on the caller's stream,
// and the call completes when an event recorded behind them has
// (nodeexec.Local.BeginOn). Any other call would need the host to wait
// for the stream first and to hold the stream until the call completes,
// which UCC's own triggered post already does for any layer (a kernel of
// its executor on the stream): PostOn refuses those, with a
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
	defer t.lockC()()
	defer t.noteBusy()
	if c.trivial || c.state == collQueued || c.state == collRunning {
		return c.post() // done at once, or Post's error
	}
	r, err := c.streamRunner()
	if err != nil {
		return notSupportedErr{fmt.Errorf("not on the caller's stream: %w", err)}
	}
	s, err := r.foreignStream(stream)
	if err != nil {
		return notSupportedErr{fmt.Errorf("not on the caller's stream: %w", err)}
	}
	r.on = s
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
	}
	return r, nil
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
