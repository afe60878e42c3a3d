package team

import (
	"errors"
	"fmt"
	"time"

	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/ucx"
)

// Lazy teams: a team that UCC creates costs nothing until goring runs a
// collective on it. Creation reads the members' context cards (what UCC
// already exchanged: rendezvous.go) and knows from them where every
// member runs, which is all the model's scores need. The first
// collective that goring's selection takes opens the team's workers and
// sends the team card to every member (teamLink); calls posted meanwhile
// wait in the team's queue, their executors built once the team is
// connected (Coll.pending). A team UCC never hands a collective to
// never opens a worker, and its destruction releases nothing but memory.

// NewLazyTeam is rank's share of a team of size whose members' context
// cards are cards[r] (each read within its own bounds); key is UCC's
// team key, the same on every member. gen numbers the teams of one key
// and member list in creation order (rendezvous.next); 0 counts this
// team here, which suits a caller that creates every team of the list.
// The UCC layer counts in C, because it makes a team here only once
// goring has work for it.
func NewLazyTeam(ctx *Context, rank, size int, key, gen uint32, cards [][]byte) (*Team, error) {
	if ctx.rv == nil {
		return nil, NotSupported("the context has no rendezvous worker")
	}
	if size < 1 || rank < 0 || rank >= size || len(cards) != size {
		return nil, Invalid("rank %d of a team of %d with %d cards", rank, size, len(cards))
	}
	if size-1 > ucx.MaxTagSender {
		return nil, NotSupported("a team of %d ranks exceeds the %d senders goring's tags can name", size, ucx.MaxTagSender+1)
	}
	all := make([]card, size)
	hosts := make([]string, size)
	for r, b := range cards {
		c, err := decodeCard(b)
		if err != nil {
			return nil, Invalid("context card of rank %d: %v", r, err)
		}
		all[r], hosts[r] = c, c.host
	}
	tp, err := teamTopology(hosts)
	if err != nil {
		return nil, err
	}
	sayPlacement(rank, hosts, tp)
	t := &Team{ctx: ctx, rank: rank, size: size, topo: tp}
	t.placeFrom(all)
	_, t.crossDecide = crossAgreement(all)
	if t.engineWanted() {
		// Now, not at connect: goring's choice (choose.Shape's Push)
		// and the scores depend on it. An engine holds nothing until used.
		t.engine = newPushEngine()
	}
	members := membersHash(all)
	if gen == 0 {
		gen = ctx.rv.next(linkKey{key: key, members: members})
	}
	t.link = &teamLink{key: key, members: members, gen: gen, peers: all}
	return t, nil
}

// placeFrom sets what the members' cards say of where they run: one host
// or several, one shared GPU, and the watch over this host's peers.
func (t *Team) placeFrom(all []card) {
	self := all[t.rank].host
	t.oneHost = true
	for _, c := range all {
		t.oneHost = t.oneHost && c.host == self
	}
	t.sharedGPU = all[0].gpu != ""
	for _, c := range all {
		t.sharedGPU = t.sharedGPU && c.gpu == all[0].gpu
	}
	named := map[string]bool{}
	for _, c := range all {
		named[c.gpu] = true
	}
	t.cardGPUs = len(named)
	if named[""] {
		t.cardGPUs = 0
	}
	t.watch = newPeerWatch(t.rank, all)
}

// engineWanted says whether the team's ranks on this host exchange CUDA
// buffers by the push engine: the same answer on every rank of a host
// (the ipc option is the context's, the driver the host's).
func (t *Team) engineWanted() bool { return !t.ctx.opts.noIPC && cuda.Load() == nil }

// open gives a lazy team its workers and starts sending its card; the
// team connects when every member's card has arrived (progressLink).
// Caller holds t.mu.
func (t *Team) open() error {
	if t.link.err != nil {
		return t.link.err
	}
	ws, ok := t.ctx.workers.take(t.laneCount())
	if !ok {
		rw, err := launch.OpenRankWorker(t.ctx.uctx)
		if err != nil {
			return resourceErr{err}
		}
		lanes, err := openTeamLanes(t.ctx, t.size)
		if err != nil {
			_ = rw.Close()
			return resourceErr{err}
		}
		ws = workerSet{rw: rw, lanes: lanes}
	}
	rw, lanes := ws.rw, ws.lanes
	t.eps = ws.eps
	own := t.link.peers[t.rank]
	own.addr, own.shared, own.lanes = laneAddress(rw, lanes), nil, len(lanes)+1
	t.rw, t.lanes, t.card = rw, lanes, encodeCard(own)
	if err := t.link.start(t.ctx.rv, t.rank, t.card); err != nil {
		t.link.err = resourceErr{err}
		return t.link.err
	}
	return nil
}

// teamLink is a lazy team's card exchange: its card sent to every member,
// every member's card received, one message at a time into buf.
type teamLink struct {
	key     uint32
	members uint64
	gen     uint32
	peers   []card   // the members' context cards (addr: their rendezvous workers)
	cards   [][]byte // the members' team cards, by rank, as they arrive
	got     int
	sends   []*ucx.Request
	recv    *ucx.Request
	buf     []byte
	started bool
	checked time.Time // the watch's last look while cards are awaited
	// deadline is the first call's that waits for the cards (timeout_ms),
	// which that wait is part of; zero: none.
	deadline time.Time
	err      error // sticky: every later call of the team fails with it
}

// start sends the team card to every other member and posts the first
// receive.
func (l *teamLink) start(rv *rendezvous, rank int, teamCard []byte) error {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	l.cards = make([][]byte, len(l.peers))
	l.cards[rank], l.got = teamCard, 1
	msg := encodeLink(l.members, l.gen, teamCard)
	self := l.peers[rank].host
	for r, p := range l.peers {
		if r == rank {
			continue
		}
		ep, err := rv.endpoint(p.addr, p.host == self)
		if err != nil {
			return fmt.Errorf("rendezvous with rank %d: %w", r, err)
		}
		req, err := ep.TagSend(msg, linkTag(l.key, rank), nil)
		if err != nil {
			return fmt.Errorf("sending the team card to rank %d: %w", r, err)
		}
		l.sends = append(l.sends, req)
	}
	l.started = true
	l.checked = time.Now()
	return l.postRecv(rv)
}

func (l *teamLink) postRecv(rv *rendezvous) error {
	if l.got == len(l.cards) {
		l.recv = nil
		return nil
	}
	if l.buf == nil {
		l.buf = rv.linkBuf()
	}
	req, err := rv.w.TagRecv(l.buf, linkTag(l.key, 0), linkKeyMask, nil)
	if err != nil {
		return fmt.Errorf("receiving team cards: %w", err)
	}
	l.recv = req
	return nil
}

// progress advances the exchange once: it reports whether every card has
// arrived and every send has left.
func (l *teamLink) progress(rv *rendezvous) (bool, error) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	rv.w.Progress()
	for l.recv != nil && l.recv.Done() {
		c := l.recv.Completion()
		if c.Err != nil {
			return false, fmt.Errorf("receiving team cards: %w", c.Err)
		}
		s, err := checkLinkSender(c.Tag, len(l.cards))
		if err != nil {
			return false, err
		}
		body, ours, err := decodeLink(l.buf[:c.Length], l.members, l.gen)
		if err != nil {
			return false, fmt.Errorf("message of rank %d: %w", s, err)
		}
		if ours && l.cards[s] == nil {
			l.cards[s] = append([]byte(nil), body...)
			l.got++
		}
		if err := l.postRecv(rv); err != nil {
			return false, err
		}
	}
	for _, s := range l.sends {
		if !s.Done() {
			return false, nil
		}
		if err := s.Err(); err != nil {
			return false, fmt.Errorf("sending the team card: %w", err)
		}
	}
	return l.got == len(l.cards), nil
}

// release gives back a finished exchange's receive buffer.
func (l *teamLink) release(rv *rendezvous) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	rv.putLinkBuf(l.buf)
	l.buf, l.sends = nil, nil
}

// cancel withdraws the receive of an exchange that will not finish (the
// team is destroyed); sends complete on their own, their buffers held by
// the package until then.
func (l *teamLink) cancel(rv *rendezvous) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if l.recv != nil && !l.recv.Done() {
		l.recv.Cancel()
		rv.w.Progress()
	}
	if l.recv == nil || l.recv.Done() {
		rv.putLinkBuf(l.buf) // else UCX may still write it: left to the collector
	}
	l.recv, l.buf = nil, nil
}

// slotCards lays the gathered cards out as connect takes them: one slot
// each, as long as the longest.
func (l *teamLink) slotCards() ([]byte, int) {
	slot := 0
	for _, c := range l.cards {
		slot = max(slot, len(c))
	}
	out := make([]byte, slot*len(l.cards))
	for r, c := range l.cards {
		copy(out[r*slot:], c)
	}
	return out, slot
}

// progressLink drives a lazy team's exchange; once every card is in, it
// connects the team. It reports whether the team is connected; a failure
// fails every queued call and every later one. Caller holds t.mu.
func (t *Team) progressLink() bool {
	l := t.link
	if l.err == nil && l.started {
		done, err := l.progress(t.ctx.rv)
		// A dead peer on this host never sends; a look costs a /proc read
		// per peer, many times an exchange that is merely in progress.
		if err == nil && !done && t.watch != nil && time.Since(l.checked) >= t.watch.Every() {
			l.checked = time.Now()
			err = t.watch.Check()
		}
		// A peer alive but stuck before the collective never sends its
		// card: the opt-in deadline ends that wait as it ends a call's.
		// Sticky, as any failure here: a later call of this rank must not
		// pair with the peer's first one.
		if len(t.queue) == 0 {
			l.deadline = time.Time{} // the calls that waited were withdrawn
		} else if l.deadline.IsZero() {
			l.deadline = t.deadline()
		}
		if err == nil && !done && !l.deadline.IsZero() && time.Now().After(l.deadline) {
			err = fmt.Errorf("%w: waiting for the members' team cards", exec.ErrDeadline)
		}
		if err == nil && done {
			cards, slot := l.slotCards()
			if err = t.connectLocked(cards, slot); err == nil {
				l.release(t.ctx.rv)
				return true
			}
		}
		if err != nil {
			l.err = resourceErr{fmt.Errorf("connecting the team: %w", err)}
		}
	}
	if l.err != nil {
		for _, c := range t.queue {
			c.state, c.err = collFailed, l.err
		}
		t.queue = nil
	}
	return false
}

// errNotOpened is what a lazy team's entry points that need its workers
// say before its first collective.
var errNotOpened = errors.New("the team has run no collective yet")
