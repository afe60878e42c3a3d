package memtransport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/goring-hpc/goring/exec"
)

// Options shape a Network's behaviour.
type Options struct {
	// Seed makes delays and reordering reproducible.
	Seed uint64
	// Eager completes a send as soon as it is posted, buffering its data
	// until the receive is posted (UCX's eager protocol). Otherwise a send
	// completes only once a receive has taken its data (rendezvous).
	Eager bool
	// MaxDelay delays each completion by a random time in [0, MaxDelay].
	MaxDelay time.Duration
	// Reorder hands out the completions that are due in a random order,
	// and sometimes only some of them per Wait.
	Reorder bool
	// Memory moves bytes from or to buffers that are not host memory (the
	// fake device of package exec/fakedev). Without it such a buffer is
	// refused at post time.
	Memory Memory
}

// Memory copies between regions of any memory type it knows (a device
// driver's copy engine, in a real transport).
type Memory interface {
	Copy(dst, src exec.Region) error
}

// ErrTruncated is the error of a receive whose message was longer than the
// posted buffer.
var ErrTruncated = errors.New("message truncated: longer than the posted receive")

// Network connects N in-process ranks. All state sits behind one mutex;
// data is copied under it when a send meets its receive, so Cancel can
// promise that a buffer is no longer touched once it returns.
type Network struct {
	mu     sync.Mutex
	opts   Options
	eps    []*Endpoint
	pairs  map[pairKey]*pairQueue
	pool   [][]byte // free eager buffers
	failed error    // set by Abort: every Wait returns it
}

type pairKey struct {
	from, to int32
	tag      uint32
}

type op struct {
	buf   exec.Region // the posted buffer (rendezvous send, recv) or the eager copy
	token uint64
	eager bool // send already completed; buf is a pool buffer
}

// fifo is a queue that reuses its backing array once drained.
type fifo struct {
	items []op
	head  int
}

func (f *fifo) empty() bool { return f.head == len(f.items) }
func (f *fifo) push(o op)   { f.items = append(f.items, o) }
func (f *fifo) pop() op {
	o := f.items[f.head]
	f.items[f.head] = op{}
	f.head++
	if f.head == len(f.items) {
		f.items, f.head = f.items[:0], 0
	}
	return o
}

// remove drops the pending (not eager) op with token; it reports whether
// one was found.
func (f *fifo) remove(token uint64) bool {
	for i := f.head; i < len(f.items); i++ {
		if f.items[i].token == token && !f.items[i].eager {
			copy(f.items[i:], f.items[i+1:])
			f.items[len(f.items)-1] = op{}
			f.items = f.items[:len(f.items)-1]
			if f.head == len(f.items) {
				f.items, f.head = f.items[:0], 0
			}
			return true
		}
	}
	return false
}

type pairQueue struct {
	sends, recvs fifo
}

// Endpoint is one rank's view of the Network; it implements
// exec.Transport. Use each Endpoint from one goroutine.
type Endpoint struct {
	net    *Network
	rank   int
	due    []pending // guarded by net.mu
	rng    *rand.Rand
	notify chan struct{}
	timer  *time.Timer
}

type pending struct {
	c  exec.Completion
	at time.Time
}

var _ exec.Transport = (*Endpoint)(nil)

// New builds a Network of n ranks.
func New(n int, opts Options) *Network {
	net := &Network{opts: opts, pairs: make(map[pairKey]*pairQueue)}
	for r := 0; r < n; r++ {
		t := time.NewTimer(time.Hour)
		t.Stop()
		net.eps = append(net.eps, &Endpoint{
			net: net, rank: r,
			rng:    rand.New(rand.NewPCG(opts.Seed, uint64(r)+1)),
			notify: make(chan struct{}, 1),
			timer:  t,
		})
	}
	return net
}

// Endpoint returns rank r's transport.
func (n *Network) Endpoint(r int) *Endpoint { return n.eps[r] }

// Size is the number of ranks.
func (n *Network) Size() int { return len(n.eps) }

// Abort fails the job: every Wait, now and later, returns err (as a
// launcher does when it reports a dead rank) until Reset.
func (n *Network) Abort(err error) {
	n.mu.Lock()
	if n.failed == nil {
		n.failed = err
	}
	n.mu.Unlock()
	for _, ep := range n.eps {
		ep.wake()
	}
}

// Reset drops every queued operation and pending completion and clears an
// Abort, so the Network can serve another call. Call it only when no rank
// is inside the transport.
func (n *Network) Reset() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.failed = nil
	for _, q := range n.pairs {
		for !q.sends.empty() {
			if o := q.sends.pop(); o.eager {
				n.pool = append(n.pool, o.buf.Bytes())
			}
		}
		for !q.recvs.empty() {
			q.recvs.pop()
		}
	}
	for _, ep := range n.eps {
		clear(ep.due)
		ep.due = ep.due[:0]
	}
}

// Pending counts queued, unmatched operations (sends and receives); a
// finished, well-formed collective leaves none.
func (n *Network) Pending() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, q := range n.pairs {
		c += len(q.sends.items) - q.sends.head + len(q.recvs.items) - q.recvs.head
	}
	return c
}

func (ep *Endpoint) wake() {
	select {
	case ep.notify <- struct{}{}:
	default:
	}
}

// complete queues c for ep after a random delay. Caller holds net.mu.
func (n *Network) complete(ep *Endpoint, c exec.Completion) {
	at := time.Now()
	if n.opts.MaxDelay > 0 {
		at = at.Add(time.Duration(ep.rng.Int64N(int64(n.opts.MaxDelay) + 1)))
	}
	ep.due = append(ep.due, pending{c, at})
	ep.wake()
}

func (n *Network) queue(k pairKey) *pairQueue {
	q := n.pairs[k]
	if q == nil {
		q = &pairQueue{}
		n.pairs[k] = q
	}
	return q
}

func (n *Network) eagerBuf(size int) []byte {
	for i, b := range n.pool {
		if cap(b) >= size {
			n.pool[i] = n.pool[len(n.pool)-1]
			n.pool = n.pool[:len(n.pool)-1]
			return b[:size]
		}
	}
	return make([]byte, size)
}

// deliver copies a send's data into a receive and completes the receive
// (and, for rendezvous, the send). Caller holds net.mu.
func (n *Network) deliver(from, to int, s op, r op) {
	c := exec.Completion{Token: r.token, Len: s.buf.Len()}
	k := min(s.buf.Len(), r.buf.Len())
	if s.buf.Len() > r.buf.Len() {
		// As UCX does: the receive gets what fits, and an error.
		c.Err = fmt.Errorf("%w (%d bytes from rank %d into %d)", ErrTruncated, s.buf.Len(), from, r.buf.Len())
	}
	if err := n.copy(r.buf.Slice(0, k), s.buf.Slice(0, k)); err != nil && c.Err == nil {
		c.Err = err
	}
	n.complete(n.eps[to], c)
	if s.eager {
		n.pool = append(n.pool, s.buf.Bytes())
	} else {
		n.complete(n.eps[from], exec.Completion{Token: s.token, Len: s.buf.Len()})
	}
}

// copy moves src into dst (same length): host memory directly, anything
// else through Options.Memory.
func (n *Network) copy(dst, src exec.Region) error {
	if dst.IsHost() && src.IsHost() {
		copy(dst.Bytes(), src.Bytes())
		return nil
	}
	if n.opts.Memory == nil {
		return fmt.Errorf("memtransport: no Memory to copy %v -> %v", src.Mem(), dst.Mem())
	}
	return n.opts.Memory.Copy(dst, src)
}

// checkMem refuses a buffer the network could not move.
func (ep *Endpoint) checkMem(b exec.Region) error {
	if !b.IsHost() && ep.net.opts.Memory == nil {
		return fmt.Errorf("memtransport: rank %d: %v memory needs Options.Memory", ep.rank, b.Mem())
	}
	return nil
}

func (ep *Endpoint) checkPeer(peer int) error {
	if peer < 0 || peer >= len(ep.net.eps) {
		return fmt.Errorf("memtransport: rank %d: peer %d is not in [0, %d)", ep.rank, peer, len(ep.net.eps))
	}
	return nil
}

// PostSend implements exec.Transport.
func (ep *Endpoint) PostSend(p *exec.Post) error {
	peer, tag, buf, token := p.Peer, p.Tag, p.Buf, p.Token
	if err := ep.checkPeer(peer); err != nil {
		return err
	}
	if err := ep.checkMem(buf); err != nil {
		return err
	}
	n := ep.net
	n.mu.Lock()
	defer n.mu.Unlock()
	q := n.queue(pairKey{int32(ep.rank), int32(peer), tag})
	s := op{buf: buf, token: token}
	if n.opts.Eager {
		s.buf = exec.HostRegion(n.eagerBuf(int(buf.Len())))
		if err := n.copy(s.buf, buf); err != nil {
			n.pool = append(n.pool, s.buf.Bytes())
			return err
		}
		s.eager = true
		n.complete(ep, exec.Completion{Token: token, Len: buf.Len()})
	}
	if !q.recvs.empty() {
		n.deliver(ep.rank, peer, s, q.recvs.pop())
		return nil
	}
	q.sends.push(s)
	return nil
}

// PostRecv implements exec.Transport.
func (ep *Endpoint) PostRecv(p *exec.Post) error {
	peer, tag, buf, token := p.Peer, p.Tag, p.Buf, p.Token
	if err := ep.checkMem(buf); err != nil {
		return err
	}
	if err := ep.checkPeer(peer); err != nil {
		return err
	}
	n := ep.net
	n.mu.Lock()
	defer n.mu.Unlock()
	q := n.queue(pairKey{int32(peer), int32(ep.rank), tag})
	r := op{buf: buf, token: token}
	if !q.sends.empty() {
		n.deliver(peer, ep.rank, q.sends.pop(), r)
		return nil
	}
	q.recvs.push(r)
	return nil
}

// Cancel implements exec.Transport: it withdraws an unmatched operation
// and drops its pending completion. Unknown tokens are a no-op.
func (ep *Endpoint) Cancel(token uint64) error {
	n := ep.net
	n.mu.Lock()
	defer n.mu.Unlock()
	for k, q := range n.pairs {
		if int(k.from) == ep.rank && q.sends.remove(token) {
			break
		}
		if int(k.to) == ep.rank && q.recvs.remove(token) {
			break
		}
	}
	kept := ep.due[:0]
	for _, p := range ep.due {
		if p.c.Token != token {
			kept = append(kept, p)
		}
	}
	clear(ep.due[len(kept):])
	ep.due = kept
	return nil
}

// Wait implements exec.Transport.
func (ep *Endpoint) Wait(deadline time.Time, dst []exec.Completion) ([]exec.Completion, error) {
	n := ep.net
	for {
		n.mu.Lock()
		if n.failed != nil {
			err := n.failed
			n.mu.Unlock()
			return dst, err
		}
		now := time.Now()
		var next time.Time
		start := len(dst)
		kept := ep.due[:0]
		for _, p := range ep.due {
			if p.at.After(now) {
				if next.IsZero() || p.at.Before(next) {
					next = p.at
				}
				kept = append(kept, p)
				continue
			}
			dst = append(dst, p.c)
		}
		clear(ep.due[len(kept):])
		ep.due = kept
		if got := dst[start:]; n.opts.Reorder && len(got) > 1 {
			ep.rng.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
			// Sometimes hand out only part; the rest stay due.
			k := 1 + ep.rng.IntN(len(got))
			for _, c := range got[k:] {
				ep.due = append(ep.due, pending{c, now})
			}
			dst = dst[:start+k]
		}
		n.mu.Unlock()
		if len(dst) > start || !now.Before(deadline) {
			return dst, nil
		}
		wake := deadline
		if !next.IsZero() && next.Before(wake) {
			wake = next
		}
		ep.timer.Reset(wake.Sub(now))
		select {
		case <-ep.notify:
		case <-ep.timer.C:
		}
		ep.timer.Stop()
	}
}
