package ucxmp

import (
	"fmt"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/ucx"
)

// Stager copies between device memory and host staging buffers, for
// device transfers that neither the push engine (a peer on another host)
// nor UCX (built without CUDA) can move, or that UCX moves slower than
// staging does (StageRemote): the sender copies its bytes to a host buffer
// and sends that, the receiver receives into a host buffer and copies it
// to the device. Each message pays two synchronous copies at PCIe rate:
// nothing beside a network of a few GB/s, too much beside RDMA. Package
// cudaexec implements it with pinned buffers; exec/fakedev for the tests.
type Stager interface {
	// Buffer returns a host buffer of n bytes that UCX may send from and
	// receive into; Release hands it back.
	Buffer(n int64) ([]byte, error)
	Release(b []byte)
	// ToHost copies the device region src into b; ToDevice copies b into
	// dst. Both have finished when they return.
	ToHost(b []byte, src exec.Region) error
	ToDevice(dst exec.Region, b []byte) error
}

// MovesCUDA reports whether the UCX in use moves CUDA memory itself.
func (t *Transport) MovesCUDA() bool { return t.memTypes.Has(ucx.MemCUDA) }

// UseStager sets the staging fallback (nil: none). A staged message is an
// ordinary UCX message of host memory, so the two ends need not agree on
// staging, and it may be set at any time between calls.
func (t *Transport) UseStager(s Stager) { t.stager = s }

// StageRemote sets the stager and stages device messages to and from the
// peers remote names even where UCX moves CUDA memory itself: over TCP,
// UCX's own pipeline through host buffers ran the team layer's allgather
// 5x slower than staging did (docs/netns.md "The users' stacks across
// the nodes"). Messages to other peers go as before.
func (t *Transport) StageRemote(s Stager, remote func(peer int) bool) {
	t.stager, t.remote = s, remote
}

// useStagingFor reports whether a transfer of b to or from peer goes
// through host staging: device memory of a peer StageRemote names, or
// what useStaging says.
func (t *Transport) useStagingFor(peer int, b exec.Region) bool {
	if t.stager != nil && t.remote != nil && !b.IsHost() && t.remote(peer) {
		return true
	}
	return t.useStaging(b)
}

// useStaging reports whether a transfer of b goes through host staging:
// device memory that UCX cannot move, with a stager set.
func (t *Transport) useStaging(b exec.Region) bool {
	if t.stager == nil || b.IsHost() {
		return false
	}
	_, err := t.memType(b)
	return err != nil
}

// postStagedSend copies p's device bytes to a host buffer and sends it.
func (t *Transport) postStagedSend(p *exec.Post) error {
	wt, err := ucx.MakeTag(t.rank, t.seq, int(p.Tag))
	if err != nil {
		return err
	}
	b, err := t.stager.Buffer(p.Buf.Len())
	if err != nil {
		return fmt.Errorf("send to rank %d: staging: %w", p.Peer, err)
	}
	if err := t.stager.ToHost(b, p.Buf); err != nil {
		t.stager.Release(b)
		return fmt.Errorf("send to rank %d: staging: %w", p.Peer, err)
	}
	token := p.Token
	r, err := t.eps[p.Peer].TagSend(b, wt, func(c ucx.Completion) {
		delete(t.reqs, token)
		t.stager.Release(b)
		t.comps = append(t.comps, exec.Completion{Token: token, Len: int64(c.Length), Err: c.Err})
	})
	if err != nil {
		t.stager.Release(b)
		return fmt.Errorf("send to rank %d: %w", p.Peer, err)
	}
	if !r.Done() {
		t.reqs[token] = r
	}
	return nil
}

// postStagedRecv receives into a host buffer and copies it to p's device
// region when the message has arrived.
func (t *Transport) postStagedRecv(p *exec.Post) error {
	wt, err := ucx.MakeTag(p.Peer, t.seq, int(p.Tag))
	if err != nil {
		return err
	}
	b, err := t.stager.Buffer(p.Buf.Len())
	if err != nil {
		return fmt.Errorf("receive from rank %d: staging: %w", p.Peer, err)
	}
	token, dst, peer := p.Token, p.Buf, p.Peer
	r, err := t.w.TagRecv(b, wt, ucx.MaskFull, func(c ucx.Completion) {
		delete(t.reqs, token)
		err := c.Err
		if err == nil {
			n := min(int64(c.Length), dst.Len())
			if cerr := t.stager.ToDevice(dst.Slice(0, n), b[:n]); cerr != nil {
				err = fmt.Errorf("ucxmp: staging from rank %d: %w", peer, cerr)
			}
		}
		t.stager.Release(b)
		t.comps = append(t.comps, exec.Completion{Token: token, Len: int64(c.Length), Err: err})
	})
	if err != nil {
		t.stager.Release(b)
		return fmt.Errorf("receive from rank %d: %w", p.Peer, err)
	}
	if !r.Done() {
		t.reqs[token] = r
	}
	return nil
}
