package ucxmp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/ucx"
)

// The push protocol for device memory between processes of one host (see
// DeviceEngine). For a step's transfer from rank s to rank r with tag t:
//
//	r: PostRecv  exports its buffer, posts a receive for DONE(s, t) and
//	             sends CTS(r, t) = {buffer length, key, offset} to s
//	s: PostSend  posts a receive for CTS(r, t)
//	s: on CTS    maps r's buffer (cached) and starts the copy into it
//	s: copy done sends DONE(s, t) = {bytes, status}; the send completes
//	r: on DONE   the receive completes with the sender's length
//
// A receive is posted only when the program allows its buffer to be
// written, so CTS is the permission to write; DONE is sent after the copy
// has finished on the device, so the bytes are there when r reads them.
// CTS and DONE are small host messages through UCX on tags of their own
// (the step tag with a high bit set), matched like the data they stand
// for: per (peer, tag) in posting order.
//
// When r cannot export its buffer, CTS says so and the data goes through
// UCX as it would without an engine. When s cannot map r's buffer during
// this call (exec.ErrMappingBusy) and has a stager, DONE says so and the
// data goes through host staging on the data tag: r posts a staged
// receive when it reads that DONE. When s cannot map r's buffer for
// another reason, or the message is longer than r's buffer, DONE carries
// the failure: both sides fail the step with a reason; nothing waits
// forever.
const (
	ctsBit  = 1 << 23 // step-tag bit of CTS messages
	doneBit = 1 << 22 // step-tag bit of DONE messages
	// maxIPCTag is the largest step tag that leaves both bits free;
	// transfers with larger tags go through UCX on both sides alike.
	maxIPCTag = doneBit - 1

	ctsLen  = 32 + MaxKeyLen
	doneLen = 16
)

// CTS flags.
const ctsViaUCX = 1 // the receiver could not export: send the data through UCX

// DONE statuses.
const (
	doneOK        = 0
	doneTruncated = 1 // the message is longer than the receiver's buffer
	doneNoMapping = 2 // the sender could not map the receiver's buffer
	doneStaged    = 3 // not now: the data comes through host staging instead
)

var errPeerNoMapping = errors.New("the sender could not map this rank's device buffer (CUDA IPC); its own error names the cause")

// ipcOp is one transfer under the push protocol, on either side.
type ipcOp struct {
	token uint64
	peer  int
	tag   uint32
	seq   int
	src   exec.Region // sender: the bytes to push
	dst   exec.Region // receiver: its buffer
	path  sched.Path
	cts   [ctsLen]byte
	done  [doneLen]byte
	req   *ucx.Request // the receive of CTS (sender) or DONE (receiver)
	// ticket is the engine's copy, valid while copying.
	ticket  uint64
	copying bool
}

// useIPC decides whether a transfer of region b with peer goes through the
// engine. Sender and receiver decide alike from what both know (peer on
// this host, device memory, the tag), so they always agree.
func (t *Transport) useIPC(peer int, tag uint32, b exec.Region) bool {
	return t.engine != nil && !b.IsHost() && peer != t.rank && tag <= maxIPCTag &&
		t.sameHost != nil && t.sameHost(peer)
}

// postIPCSend starts the sender's side: wait for the receiver's CTS.
func (t *Transport) postIPCSend(p *exec.Post) error {
	ctsTag, err := ucx.MakeTag(p.Peer, t.seq, int(p.Tag)|ctsBit)
	if err != nil {
		return err
	}
	op := &ipcOp{token: p.Token, peer: p.Peer, tag: p.Tag, seq: t.seq, src: p.Buf, path: p.Path}
	r, err := t.w.TagRecv(op.cts[:], ctsTag, ucx.MaskFull, func(c ucx.Completion) {
		if c.Err != nil {
			t.ipcFail(op, fmt.Errorf("clear-to-send from rank %d: %w", op.peer, c.Err))
			return
		}
		t.ctsReady = append(t.ctsReady, op)
	})
	if err != nil {
		return fmt.Errorf("send to rank %d: %w", p.Peer, err)
	}
	op.req = r
	t.ipcOps[p.Token] = op
	return nil
}

// postIPCRecv starts the receiver's side: export the buffer, wait for
// DONE, send CTS. A buffer the engine cannot export is received through
// UCX, and CTS tells the sender so.
func (t *Transport) postIPCRecv(p *exec.Post) error {
	op := &ipcOp{token: p.Token, peer: p.Peer, tag: p.Tag, seq: t.seq, dst: p.Buf}
	key, off, xerr := t.engine.Export(p.Buf)
	if xerr != nil {
		post := t.postUCXRecv
		if t.useStaging(p.Buf) {
			post = t.postStagedRecv
		}
		if err := post(p); err != nil {
			return err
		}
		op.cts[0] = ctsViaUCX
	} else {
		doneTag, err := ucx.MakeTag(p.Peer, t.seq, int(p.Tag)|doneBit)
		if err != nil {
			return err
		}
		r, err := t.w.TagRecv(op.done[:], doneTag, ucx.MaskFull, func(c ucx.Completion) { t.ipcDone(op, c) })
		if err != nil {
			return fmt.Errorf("receive from rank %d: %w", p.Peer, err)
		}
		op.req = r
		t.ipcOps[p.Token] = op
		binary.LittleEndian.PutUint64(op.cts[8:], uint64(p.Buf.Len()))
		binary.LittleEndian.PutUint64(op.cts[16:], uint64(off))
		binary.LittleEndian.PutUint32(op.cts[24:], uint32(len(key)))
		copy(op.cts[32:], key)
	}
	ctsTag, err := ucx.MakeTag(t.rank, t.seq, int(p.Tag)|ctsBit)
	if err != nil {
		return err
	}
	if _, err := t.eps[p.Peer].TagSend(op.cts[:], ctsTag, func(c ucx.Completion) {
		if c.Err != nil {
			t.ipcFail(op, fmt.Errorf("clear-to-send to rank %d: %w", op.peer, c.Err))
		}
	}); err != nil {
		return fmt.Errorf("clear-to-send to rank %d: %w", p.Peer, err)
	}
	return nil
}

// ipcDone completes a receive when the sender's DONE arrives.
func (t *Transport) ipcDone(op *ipcOp, c ucx.Completion) {
	if c.Err != nil {
		t.ipcFail(op, fmt.Errorf("completion message from rank %d: %w", op.peer, c.Err))
		return
	}
	n := int64(binary.LittleEndian.Uint64(op.done[0:]))
	var err error
	switch st := binary.LittleEndian.Uint64(op.done[8:]); st {
	case doneOK:
	case doneTruncated:
		err = fmt.Errorf("rank %d sent %d bytes: %w", op.peer, n, ucx.ErrMessageTruncated)
	case doneNoMapping:
		err = fmt.Errorf("rank %d: %w", op.peer, errPeerNoMapping)
	case doneStaged:
		// The receive goes on as a staged one, posted after this
		// progress (ipcStep), on the data tag the sender stages to.
		t.stageReady = append(t.stageReady, op)
		return
	default:
		err = fmt.Errorf("rank %d: unknown completion status %d", op.peer, st)
	}
	t.ipcComplete(op, exec.Completion{Token: op.token, Len: n, Err: err})
}

// startCopies handles the CTS messages that arrived: start the copy into
// the receiver's buffer, or send through UCX, or report why not.
func (t *Transport) startCopies() {
	for len(t.ctsReady) > 0 {
		op := t.ctsReady[0]
		t.ctsReady = t.ctsReady[1:]
		if t.ipcOps[op.token] != op {
			continue // cancelled meanwhile
		}
		if op.cts[0]&ctsViaUCX != 0 {
			t.sendViaUCX(op, false)
			continue
		}
		room := int64(binary.LittleEndian.Uint64(op.cts[8:]))
		off := int64(binary.LittleEndian.Uint64(op.cts[16:]))
		klen := binary.LittleEndian.Uint32(op.cts[24:])
		if klen > MaxKeyLen {
			t.ipcFail(op, fmt.Errorf("clear-to-send from rank %d: key of %d bytes", op.peer, klen))
			continue
		}
		n := op.src.Len()
		if n > room {
			t.sendDone(op, n, doneTruncated)
			t.ipcComplete(op, exec.Completion{Token: op.token, Err: fmt.Errorf("send of %d bytes to rank %d, whose buffer holds %d: %w", n, op.peer, room, ucx.ErrMessageTruncated)})
			continue
		}
		ticket, err := t.engine.Start(op.peer, op.cts[32:32+klen], off, op.src, op.path)
		if errors.Is(err, exec.ErrMappingBusy) && t.stager != nil {
			t.busyStaged++
			t.sendDone(op, n, doneStaged)
			t.sendViaUCX(op, true)
			continue
		}
		if err != nil {
			t.sendDone(op, n, doneNoMapping)
			t.ipcComplete(op, exec.Completion{Token: op.token, Err: fmt.Errorf("send to rank %d: %w", op.peer, err)})
			continue
		}
		op.ticket, op.copying = ticket, true
		t.copying = append(t.copying, op)
		// UCX's event fd says nothing of device work: poll while it runs.
		t.devOps[op.token] = struct{}{}
	}
}

// finishCopies sends DONE for the copies that finished.
func (t *Transport) finishCopies() {
	k := 0
	for _, op := range t.copying {
		done, err := t.engine.Done(op.ticket)
		switch {
		case err != nil:
			op.copying = false
			t.sendDone(op, op.src.Len(), doneNoMapping)
			t.ipcComplete(op, exec.Completion{Token: op.token, Err: fmt.Errorf("copy to rank %d: %w", op.peer, err)})
		case done:
			op.copying = false
			t.sendDone(op, op.src.Len(), doneOK)
			t.ipcComplete(op, exec.Completion{Token: op.token, Len: op.src.Len()})
		default:
			t.copying[k] = op
			k++
		}
	}
	clear(t.copying[k:])
	t.copying = t.copying[:k]
}

// sendViaUCX sends op's data through UCX: the receiver posted a UCX
// receive for it instead of exporting its buffer. staged: through host
// staging whatever UCX moves (the receiver posts a staged receive when it
// reads DONE's doneStaged).
func (t *Transport) sendViaUCX(op *ipcOp, staged bool) {
	delete(t.ipcOps, op.token)
	p := exec.Post{Peer: op.peer, Tag: op.tag, Buf: op.src, Token: op.token, Path: op.path}
	seq := t.seq
	t.seq = op.seq // the data tag carries the call's sequence number
	post := t.postUCXSend
	if staged || t.useStaging(op.src) {
		post = t.postStagedSend
	}
	err := post(&p)
	t.seq = seq
	if err != nil {
		delete(t.devOps, op.token)
		t.comps = append(t.comps, exec.Completion{Token: op.token, Err: err})
	}
}

// sendDone tells the receiver that the copy of op finished (or failed).
// DONE is fire-and-forget: its buffer lives in op, which nothing reuses.
func (t *Transport) sendDone(op *ipcOp, n int64, status uint64) {
	binary.LittleEndian.PutUint64(op.done[0:], uint64(n))
	binary.LittleEndian.PutUint64(op.done[8:], status)
	tag, err := ucx.MakeTag(t.rank, op.seq, int(op.tag)|doneBit)
	if err == nil {
		_, err = t.eps[op.peer].TagSend(op.done[:], tag, func(ucx.Completion) {})
	}
	if err != nil && t.peerErr == nil {
		t.peerErr = fmt.Errorf("ucxmp: completion message to rank %d: %w", op.peer, err)
	}
}

// ipcComplete reports op's completion once.
func (t *Transport) ipcComplete(op *ipcOp, c exec.Completion) {
	if t.ipcOps[op.token] != op {
		return // cancelled, or already reported
	}
	delete(t.ipcOps, op.token)
	delete(t.devOps, op.token)
	t.comps = append(t.comps, c)
}

// ipcFail reports op's failure (a control message that failed).
func (t *Transport) ipcFail(op *ipcOp, err error) {
	t.ipcComplete(op, exec.Completion{Token: op.token, Err: fmt.Errorf("ucxmp: %w", err)})
}

// BusyStaged is how many of this rank's pushes went through host staging
// because the engine could not map the receiver's buffer during the call
// (exec.ErrMappingBusy): a diagnostic.
func (t *Transport) BusyStaged() int { return t.busyStaged }

// recvStaged goes on with op's receive as a staged one: the sender could
// not map op's buffer during this call and stages the data instead.
func (t *Transport) recvStaged(op *ipcOp) {
	if t.ipcOps[op.token] != op {
		return // cancelled meanwhile
	}
	if t.stager == nil {
		t.ipcFail(op, fmt.Errorf("rank %d stages a message to this rank, which has no stager", op.peer))
		return
	}
	delete(t.ipcOps, op.token)
	p := exec.Post{Peer: op.peer, Tag: op.tag, Buf: op.dst, Token: op.token}
	seq := t.seq
	t.seq = op.seq
	err := t.postStagedRecv(&p)
	t.seq = seq
	if err != nil {
		t.comps = append(t.comps, exec.Completion{Token: op.token, Err: err})
	}
}

// ipcStep moves the push protocol on: called after every progress.
func (t *Transport) ipcStep() {
	for len(t.stageReady) > 0 {
		op := t.stageReady[0]
		t.stageReady = t.stageReady[1:]
		t.recvStaged(op)
	}
	if len(t.ctsReady) > 0 {
		t.startCopies()
	}
	if len(t.copying) > 0 {
		t.finishCopies()
	}
}

// cancelIPC withdraws op: a control receive is cancelled, a copy under
// way is waited for (a copy cannot be recalled; when cancelIPC returns,
// the engine no longer touches op's buffers).
func (t *Transport) cancelIPC(op *ipcOp) error {
	delete(t.ipcOps, op.token)
	delete(t.devOps, op.token)
	var err error
	if op.copying {
		op.copying = false
		err = t.engine.Finish(op.ticket)
		k := 0
		for _, c := range t.copying {
			if c != op {
				t.copying[k] = c
				k++
			}
		}
		t.copying = t.copying[:k]
	}
	if op.req != nil && !op.req.Done() {
		if cerr := t.waitCancelled(op.req); err == nil {
			err = cerr
		}
	}
	t.drop(op.token)
	return err
}
