package ucxmp

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/ucx"
)

// Rails is the data plane of a rank on a multi-rail cluster (the network
// namespace testbed, docs/netns.md): one Transport over a shared-memory
// worker for the peers on this rank's node, and one Transport per rail,
// each over a worker whose UCX context sees only that rail's device, for
// the peers on other nodes. Which one carries a message is decided the same
// way on both ends, so that the receive is posted on the worker the message
// arrives at:
//
//   - a peer on this node: the local transport;
//   - a peer on another node: the rail of the sender (RailOf(sender)). A
//     send's rail hint (sched.PathRail) must name that rail: GPU i owns rail
//     i (Parallel Rings III-A, Multi-lane Alg. 2, NIMBLE's rail-matched
//     paths), and sched's TestRailHintIsSendersRail pins that every
//     algorithm hints so. A hint naming another rail is refused at post
//     time rather than left to hang, since the receiver would wait on the
//     sender's own rail.
//
// It implements exec.Transport and bench.Transport. Like Transport it is
// driven by one goroutine.
type Rails struct {
	rank     int
	local    *Transport
	rails    []*Transport
	sameNode func(peer int) bool
	railOf   func(rank int) int
	all      []*Transport
	fds      []unix.PollFd
	// SpinPolls and Yield mean what they mean for Transport.Wait, applied
	// to one progress of every worker.
	SpinPolls int
	Yield     time.Duration
}

var _ exec.Transport = (*Rails)(nil)

// NewRails joins the local transport (peers for which sameNode holds, this
// rank included) and one transport per rail (rails[r]: peers on other nodes
// over rail r). railOf gives a rank's rail in [0, len(rails)). Each
// transport's worker needs the wakeup feature (Wait polls their event fds).
func NewRails(rank int, local *Transport, rails []*Transport, sameNode func(peer int) bool, railOf func(rank int) int) (*Rails, error) {
	if local == nil || len(rails) == 0 {
		return nil, errors.New("ucxmp: rails need a local transport and at least one rail")
	}
	m := &Rails{rank: rank, local: local, rails: rails, sameNode: sameNode, railOf: railOf, SpinPolls: DefaultSpinPolls, Yield: DefaultYield}
	m.all = append([]*Transport{local}, rails...)
	for _, t := range m.all {
		// One progress per call: Rails.Wait does the spinning and sleeping.
		t.SpinPolls = 1
		t.Yield = 0
		fd := t.w.EventFD()
		if fd < 0 {
			return nil, errors.New("ucxmp: rails: a worker has no event fd (context without wakeup)")
		}
		m.fds = append(m.fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	return m, nil
}

// Rank is this rank.
func (m *Rails) Rank() int { return m.rank }

// route is the transport that carries a message between this rank and
// peer; sender is the rank that sends it (this rank or peer).
func (m *Rails) route(peer, sender int) (*Transport, error) {
	if m.sameNode(peer) {
		return m.local, nil
	}
	r := m.railOf(sender)
	if r < 0 || r >= len(m.rails) {
		return nil, fmt.Errorf("ucxmp: rank %d's rail %d: this rank has %d rails", sender, r, len(m.rails))
	}
	return m.rails[r], nil
}

// PostSend implements exec.Transport.
func (m *Rails) PostSend(p *exec.Post) error {
	t, err := m.route(p.Peer, m.rank)
	if err != nil {
		return err
	}
	if p.Path.Kind == sched.PathRail && t != m.local && m.rails[p.Path.Index%uint8(len(m.rails))] != t {
		return fmt.Errorf("ucxmp: rank %d: a send to rank %d hinted rail %d, but this rank's rail is %d (a receiver expects the sender's own rail)", m.rank, p.Peer, p.Path.Index, m.railOf(m.rank))
	}
	return t.PostSend(p)
}

// PostRecv implements exec.Transport.
func (m *Rails) PostRecv(p *exec.Post) error {
	t, err := m.route(p.Peer, p.Peer)
	if err != nil {
		return err
	}
	return t.PostRecv(p)
}

// NextCall implements bench.Transport: every worker's tags move on together.
func (m *Rails) NextCall() {
	for _, t := range m.all {
		t.NextCall()
	}
}

// Wait implements exec.Transport: progress every worker, spin and yield
// as Transport.Wait does, then arm every worker and sleep in poll(2) on all
// their event fds until one has work or the deadline passes.
func (m *Rails) Wait(deadline time.Time, dst []exec.Completion) ([]exec.Completion, error) {
	spins := 0
	var yieldUntil time.Time
	for {
		n0 := len(dst)
		var err error
		for _, t := range m.all {
			if dst, err = t.Wait(time.Time{}, dst); err != nil {
				return dst, err
			}
		}
		if len(dst) > n0 {
			return dst, nil
		}
		now := time.Now()
		if !now.Before(deadline) {
			return dst, nil
		}
		if m.SpinPolls < 0 || spins < m.SpinPolls {
			spins++
			continue
		}
		if m.devicePending() {
			// Device work (the push engine's copies, UCX's CUDA
			// transports) finishes by polling and signals no event fd:
			// a sleep in poll(2) would outlast it, so keep polling,
			// yielding the CPU between rounds, as Transport.Wait does.
			schedYield()
			continue
		}
		if m.Yield > 0 {
			if yieldUntil.IsZero() {
				yieldUntil = now.Add(m.Yield)
			}
			if now.Before(yieldUntil) {
				schedYield()
				continue
			}
		}
		if busy, err := m.arm(); err != nil || busy {
			if err != nil {
				return dst, err
			}
			continue
		}
		ms := int(deadline.Sub(now).Milliseconds()) + 1
		for i := range m.fds {
			m.fds[i].Revents = 0
		}
		if _, err := unix.Poll(m.fds, ms); err != nil && !errors.Is(err, unix.EINTR) {
			return dst, fmt.Errorf("ucxmp: rails: poll: %w", err)
		}
	}
}

// devicePending reports whether any transport has device work in flight.
func (m *Rails) devicePending() bool {
	for _, t := range m.all {
		if len(t.devOps) > 0 {
			return true
		}
	}
	return false
}

// Local is the transport to the peers of this rank's node.
func (m *Rails) Local() *Transport { return m.local }

// RailTransports are the transports to the other nodes, rail r's at r.
// With device buffers, goring bench gives Local the push engine and these
// host staging (docs/netns.md).
func (m *Rails) RailTransports() []*Transport { return m.rails }

// arm arms every worker; busy means one has events already (progress
// instead of sleeping).
func (m *Rails) arm() (busy bool, err error) {
	for _, t := range m.all {
		if err := t.w.Arm(); err != nil {
			var st ucx.Status
			if errors.As(err, &st) && st == ucx.ErrBusy {
				return true, nil
			}
			return false, err
		}
	}
	return false, nil
}

// Cancel implements exec.Transport: the token belongs to one transport, and
// the others treat it as unknown (a no-op).
func (m *Rails) Cancel(token uint64) error {
	var errs []error
	for _, t := range m.all {
		if err := t.Cancel(token); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close closes every transport's endpoints (the workers stay open).
func (m *Rails) Close() error {
	var errs []error
	for _, t := range m.all {
		errs = append(errs, t.Close())
	}
	return errors.Join(errs...)
}
