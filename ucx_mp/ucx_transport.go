package ucxmp

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/ucx"
)

// DefaultSpinPolls is how many non-blocking progress calls Wait makes
// before it sleeps on the event fd. Spinning a little saves the cost of
// arming the worker for completions that are microseconds away; sleeping
// soon leaves the core to other ranks when there are more ranks than cores.
const DefaultSpinPolls = 64

// DefaultYield is how long Wait keeps polling, yielding the CPU between
// polls (sched_yield), before it sleeps on the event fd. See Transport.Yield.
const DefaultYield = 2 * time.Millisecond

// cancelTimeout bounds how long Cancel progresses the worker until a
// cancelled operation has released its buffer (exec.CancelWait, which the C
// executor keeps too).
const cancelTimeout = exec.CancelWait

// Transport is the single-path (direct) data plane of one rank: one UCX
// worker, an endpoint to every peer. It implements exec.Transport.
type Transport struct {
	w    *ucx.Worker
	rank int
	eps  []*ucx.Endpoint
	seq  int // the current call's sequence number
	// seqCell holds the last sequence number taken: lastSeq, or memory
	// that another executor of the same worker also draws from (package
	// cexec's C path, ShareSeq), so that every call of the team,
	// whichever executor runs it, takes the next number in post order.
	seqCell *uint32
	lastSeq uint32
	comps   []exec.Completion
	reqs    map[uint64]*ucx.Request
	// SpinPolls is the number of progress calls before Wait sleeps
	// (DefaultSpinPolls; 0 sleeps at once; negative never sleeps: a busy
	// poll, for comparison only, since it burns a core per waiting rank).
	SpinPolls int
	// Yield is how long, after the spin polls, Wait keeps polling with a
	// sched_yield between polls before it sleeps on the event fd. When
	// ranks outnumber cores, yielding hands the core to the peer that is
	// about to answer without the cost of an event-fd wakeup (Open MPI's
	// yield_when_idle); a long wait still ends up asleep.
	Yield    time.Duration
	peerErr  error
	memTypes ucx.MemoryTypes
	// devOps are the posted operations on device memory. UCX's CUDA
	// transports finish work by polling CUDA events and never signal the
	// worker's event fd, so while any is in flight Wait polls (yielding
	// the CPU between polls) instead of sleeping on the fd.
	devOps map[uint64]struct{}

	// The push protocol for device memory on this host (ipc.go).
	engine   DeviceEngine
	sameHost func(peer int) bool
	ipcOps   map[uint64]*ipcOp
	ctsReady []*ipcOp
	copying  []*ipcOp
	// stageReady are receives whose sender stages the data instead (DONE
	// said doneStaged), to post after this progress.
	stageReady []*ipcOp
	// busyStaged counts the pushes this rank staged because the engine
	// could not map the receiver's buffer during the call (BusyStaged).
	busyStaged int
	stager     Stager              // host staging where neither the engine nor UCX moves device memory (stage.go)
	remote     func(peer int) bool // peers whose device messages are staged anyway (StageRemote); nil: none
	// Each peer's address and error mode, as New connected it (Release).
	addrs    [][]byte
	peerErrs []bool
}

var _ exec.Transport = (*Transport)(nil)

// Options configure New.
type Options struct {
	// PeerErrors asks UCX to detect dead peers on the endpoints (error
	// handling mode "peer"). UCX 1.13 then drops shared-memory transports
	// and runs over TCP even on one host, several times slower, so it is
	// off by default: goring's launcher watches the ranks instead (a dead
	// rank fails the job through the coordinator) and every call has a
	// deadline.
	PeerErrors bool
	// PeerErrorsTo, when set, decides per peer instead of PeerErrors: a
	// team layer turns peer errors on for peers on other hosts (whose
	// transports detect failure anyway) and off for those on its own
	// host, which it watches by process (see exec.Watch).
	PeerErrorsTo func(peer int) bool
	// MemoryTypes are the memory types the worker's UCX context moves
	// (ucx.Context.MemoryTypes); device buffers of a type not in it are
	// refused at post time with the reason. Host memory always moves.
	MemoryTypes ucx.MemoryTypes
	// Engine, when set, moves device memory between ranks of one host
	// (SameHost) itself, UCX carrying only small control messages (see
	// DeviceEngine and ipc.go). Every rank of a team must agree on
	// whether it has one.
	Engine DeviceEngine
	// SameHost reports whether peer runs on this rank's host; the engine
	// serves only those peers. Nil means none.
	SameHost func(peer int) bool
	// Stager, when set, carries device memory that neither the engine nor
	// UCX can move through host buffers (see Stager).
	Stager Stager
	// Endpoints, when set, supplies endpoints kept from the worker's
	// previous transport (EndpointCache; Release puts them back).
	Endpoints *EndpointCache
}

// New connects worker w of rank to every peer, given every rank's worker
// address (addrs[rank] is this worker's own and is used for the loopback
// endpoint). A nil address leaves that peer unconnected: a post to it fails
// (Rails gives each of its transports only the peers it serves).
func New(w *ucx.Worker, rank int, addrs [][]byte, opts Options) (*Transport, error) {
	if rank < 0 || rank >= len(addrs) {
		return nil, fmt.Errorf("ucxmp: rank %d out of range for %d addresses", rank, len(addrs))
	}
	if len(addrs)-1 > ucx.MaxTagSender {
		return nil, fmt.Errorf("ucxmp: %d ranks exceed the tag's sender field (%d)", len(addrs), ucx.MaxTagSender+1)
	}
	t := &Transport{w: w, rank: rank, eps: make([]*ucx.Endpoint, len(addrs)), reqs: map[uint64]*ucx.Request{}, SpinPolls: DefaultSpinPolls, memTypes: opts.MemoryTypes, devOps: map[uint64]struct{}{},
		engine: opts.Engine, sameHost: opts.SameHost, ipcOps: map[uint64]*ipcOp{}, stager: opts.Stager}
	t.seqCell = &t.lastSeq
	t.addrs, t.peerErrs = make([][]byte, len(addrs)), make([]bool, len(addrs))
	for p, a := range addrs {
		if a == nil {
			continue
		}
		peer := p
		peerErrors := opts.PeerErrors
		if opts.PeerErrorsTo != nil {
			peerErrors = opts.PeerErrorsTo(p)
		}
		onError := func(err error) {
			if t.peerErr == nil {
				t.peerErr = fmt.Errorf("ucxmp: endpoint to rank %d failed: %w", peer, err)
			}
		}
		t.addrs[p], t.peerErrs[p] = a, peerErrors
		if ep := opts.Endpoints.take(a, peerErrors); ep != nil {
			ep.SetOnError(onError)
			t.eps[p] = ep
			continue
		}
		ep, err := w.Connect(a, ucx.EndpointOptions{NoPeerErrors: !peerErrors, OnError: onError})
		if err != nil {
			t.Close()
			return nil, fmt.Errorf("ucxmp: rank %d connecting to rank %d: %w", rank, peer, err)
		}
		t.eps[p] = ep
	}
	return t, nil
}

// UseEngine sets the push engine and the same-host rule after New (see
// Options.Engine), before the first post.
func (t *Transport) UseEngine(e DeviceEngine, sameHost func(peer int) bool) {
	t.engine, t.sameHost = e, sameHost
}

// Rank is this transport's rank.
func (t *Transport) Rank() int { return t.rank }

// NextCall starts a new collective call: the posts that follow carry the
// next sequence number in their tags.
func (t *Transport) NextCall() {
	*t.seqCell = (*t.seqCell + 1) & ucx.MaxTagSeq
	t.seq = int(*t.seqCell)
}

// ShareSeq makes NextCall draw from *cell (which may be C memory, read and
// written by C between Go's calls) instead of the transport's own counter.
func (t *Transport) ShareSeq(cell *uint32) {
	*cell = *t.seqCell
	t.seqCell = cell
}

// Endpoint is the endpoint to peer (nil for a peer this transport does not
// serve), for code that posts on the worker itself (package cexec).
func (t *Transport) Endpoint(peer int) *ucx.Endpoint { return t.eps[peer] }

// Worker is the transport's UCX worker.
func (t *Transport) Worker() *ucx.Worker { return t.w }

// PeerErr progresses the worker once (completions of Go's operations are
// kept for the next Wait) and reports an endpoint failure seen so far.
func (t *Transport) PeerErr() error {
	t.w.Progress()
	return t.peerErr
}

// Seq is the sequence number of the current call.
func (t *Transport) Seq() int { return t.seq }

func (t *Transport) peer(p int) (*ucx.Endpoint, error) {
	if p < 0 || p >= len(t.eps) {
		return nil, fmt.Errorf("ucxmp: peer %d out of range [0,%d)", p, len(t.eps))
	}
	if t.eps[p] == nil {
		return nil, fmt.Errorf("ucxmp: rank %d has no endpoint to rank %d on this worker", t.rank, p)
	}
	return t.eps[p], nil
}

func (t *Transport) callback(token uint64) ucx.Callback {
	return func(c ucx.Completion) {
		delete(t.reqs, token)
		delete(t.devOps, token)
		t.comps = append(t.comps, exec.Completion{Token: token, Len: int64(c.Length), Err: c.Err})
	}
}

// memType is the UCX memory type of b, or an error when UCX (as the
// transport was told at New) cannot move it.
func (t *Transport) memType(b exec.Region) (ucx.MemoryType, error) {
	switch b.Mem().Kind {
	case exec.MemHost:
		return ucx.MemHost, nil
	case exec.MemCUDA:
		if t.memTypes.Has(ucx.MemCUDA) {
			return ucx.MemCUDA, nil
		}
		return 0, fmt.Errorf("ucxmp: %v memory, but the UCX in use (%s) moves no CUDA memory: use a CUDA-enabled UCX (make deps installs one; GORING_LIBUCP)", b.Mem(), ucx.VersionString())
	}
	return 0, fmt.Errorf("ucxmp: UCX cannot move %v memory", b.Mem())
}

// PostSend implements exec.Transport.
func (t *Transport) PostSend(p *exec.Post) error {
	if _, err := t.peer(p.Peer); err != nil {
		return err
	}
	if t.useIPC(p.Peer, p.Tag, p.Buf) {
		return t.postIPCSend(p)
	}
	if t.useStagingFor(p.Peer, p.Buf) {
		return t.postStagedSend(p)
	}
	return t.postUCXSend(p)
}

// postUCXSend sends p's buffer with one UCP tag send.
func (t *Transport) postUCXSend(p *exec.Post) error {
	peer, token := p.Peer, p.Token
	ep := t.eps[peer]
	wt, err := ucx.MakeTag(t.rank, t.seq, int(p.Tag))
	if err != nil {
		return err
	}
	mt, err := t.memType(p.Buf)
	if err != nil {
		return err
	}
	var r *ucx.Request
	if mt == ucx.MemHost {
		r, err = ep.TagSend(p.Buf.Bytes(), wt, t.callback(token))
	} else {
		r, err = ep.TagSendAddr(p.Buf.Addr(), int(p.Buf.Len()), mt, wt, t.callback(token))
	}
	if err != nil {
		return fmt.Errorf("send to rank %d: %w", peer, err)
	}
	if !r.Done() {
		t.reqs[token] = r
		if mt != ucx.MemHost {
			t.devOps[token] = struct{}{}
		}
	}
	return nil
}

// PostRecv implements exec.Transport.
func (t *Transport) PostRecv(p *exec.Post) error {
	if _, err := t.peer(p.Peer); err != nil {
		return err
	}
	if t.useIPC(p.Peer, p.Tag, p.Buf) {
		return t.postIPCRecv(p)
	}
	if t.useStagingFor(p.Peer, p.Buf) {
		return t.postStagedRecv(p)
	}
	return t.postUCXRecv(p)
}

// postUCXRecv receives into p's buffer with one UCP tag receive.
func (t *Transport) postUCXRecv(p *exec.Post) error {
	peer, token := p.Peer, p.Token
	wt, err := ucx.MakeTag(peer, t.seq, int(p.Tag))
	if err != nil {
		return err
	}
	mt, err := t.memType(p.Buf)
	if err != nil {
		return err
	}
	var r *ucx.Request
	if mt == ucx.MemHost {
		r, err = t.w.TagRecv(p.Buf.Bytes(), wt, ucx.MaskFull, t.callback(token))
	} else {
		r, err = t.w.TagRecvAddr(p.Buf.Addr(), int(p.Buf.Len()), mt, wt, ucx.MaskFull, t.callback(token))
	}
	if err != nil {
		return fmt.Errorf("receive from rank %d: %w", peer, err)
	}
	if !r.Done() {
		t.reqs[token] = r
		if mt != ucx.MemHost {
			t.devOps[token] = struct{}{}
		}
	}
	return nil
}

// Wait implements exec.Transport: progress, a short spin, then a sleep on
// the worker's event fd until the deadline.
func (t *Transport) Wait(deadline time.Time, dst []exec.Completion) ([]exec.Completion, error) {
	spins := 0
	var yieldUntil time.Time
	for len(t.comps) == 0 {
		if t.engine != nil {
			t.ipcStep() // CTS messages a sleep on the event fd delivered
		}
		if t.peerErr != nil {
			return dst, t.peerErr
		}
		if t.SpinPolls < 0 || spins < t.SpinPolls {
			// Progress before looking at the clock, so that a past or
			// zero deadline still polls the worker once: a caller that
			// must not block (exec.Call.Progress from a UCC progress
			// function) passes one.
			spins++
			t.progress()
			if len(t.comps) == 0 && !time.Now().Before(deadline) {
				return dst, nil
			}
			continue
		}
		now := time.Now()
		if t.Yield > 0 || len(t.devOps) > 0 {
			if yieldUntil.IsZero() {
				yieldUntil = now.Add(t.Yield)
			}
			if (now.Before(yieldUntil) || len(t.devOps) > 0) && now.Before(deadline) {
				schedYield()
				t.progress()
				continue
			}
		}
		left := deadline.Sub(now)
		if left <= 0 {
			return dst, nil
		}
		if _, err := t.w.Wait(left); err != nil {
			return dst, err
		}
		if len(t.comps) == 0 && !time.Now().Before(deadline) {
			return dst, nil
		}
	}
	dst = append(dst, t.comps...)
	t.comps = t.comps[:0]
	return dst, nil
}

// progress progresses the worker (its callbacks run) and then the push
// protocol's device work.
func (t *Transport) progress() {
	t.w.Progress()
	if t.engine != nil {
		t.ipcStep()
	}
}

// schedYield gives the CPU to another runnable thread (sched_yield(2)).
func schedYield() { _, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }

// Cancel implements exec.Transport. It progresses the worker until the
// operation has completed (cancelled or not), so that UCX no longer
// touches its buffer, and drops the completion.
func (t *Transport) Cancel(token uint64) error {
	if op := t.ipcOps[token]; op != nil {
		return t.cancelIPC(op)
	}
	r := t.reqs[token]
	if r == nil {
		t.drop(token)
		return nil
	}
	if err := t.waitCancelled(r); err != nil {
		return fmt.Errorf("ucxmp: operation %#x: %w", token, err)
	}
	t.drop(token)
	return nil
}

// waitCancelled cancels r and progresses the worker until UCX has let go
// of r's buffer.
func (t *Transport) waitCancelled(r *ucx.Request) error {
	r.Cancel()
	deadline := time.Now().Add(cancelTimeout)
	for !r.Done() {
		if !time.Now().Before(deadline) {
			return fmt.Errorf("still in flight %v after cancel", cancelTimeout)
		}
		if _, err := t.w.Wait(10 * time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

func (t *Transport) drop(token uint64) {
	k := 0
	for _, c := range t.comps {
		if c.Token != token {
			t.comps[k] = c
			k++
		}
	}
	t.comps = t.comps[:k]
}

// Close closes the endpoints (flushing what was sent) and forgets pending
// operations; the worker stays open (its owner closes it).
func (t *Transport) Close() error {
	var errs []error
	for p, ep := range t.eps {
		if ep != nil {
			if err := ep.Close(); err != nil {
				errs = append(errs, fmt.Errorf("rank %d: %w", p, err))
			}
			t.eps[p] = nil
		}
	}
	return errors.Join(errs...)
}
