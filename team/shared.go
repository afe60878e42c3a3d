package team

import (
	"errors"
	"fmt"

	"github.com/goring-hpc/goring/cexec"
	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/ucx"
)

// The context path (docs/ucc.md "The context path"): a context whose C
// path is on opens one more UCX worker at its creation, the shared worker,
// and publishes its address in the context card. The small host calls
// of its lazy teams run there in C (the UCC adapter's ctxpath.c): every
// team of the context posts on the same endpoints (one per context rank,
// made once), its tags naming the team by UCC's key, and the context
// keeps each shape's lowered program per member list, rank and size. So
// a new team of members seen before runs its first call with no worker,
// no card exchange and no entry into Go: what a communicator costs where
// applications make them by the thousand. Go plans a shape the first
// time a member list calls it (SharedProgram) and connects the members'
// endpoints then.

// sharedWorker is a context's shared worker: the worker and its C record,
// and the endpoints Go made on it (by context rank), which C posts on.
type sharedWorker struct {
	rw  *launch.RankWorker
	cs  *cexec.Shared
	eps map[uint32]*ucx.Endpoint // guarded by cs's lock
}

// openShared opens the shared worker of a context whose C path is on
// (nil otherwise: no C path, or none to run it).
func openShared(c *Context) (*sharedWorker, error) {
	if c.cpath == nil || c.opts.cpathMax == 0 || c.opts.timeout > 0 {
		return nil, nil
	}
	rw, err := launch.OpenRankWorker(c.uctx)
	if err != nil {
		return nil, err
	}
	cs, err := cexec.NewShared(rw.Worker)
	if err != nil {
		_ = rw.Close()
		return nil, err
	}
	return &sharedWorker{rw: rw, cs: cs, eps: map[uint32]*ucx.Endpoint{}}, nil
}

// address is what the context card publishes of the shared worker.
func (s *sharedWorker) address() []byte {
	if s == nil {
		return nil
	}
	return s.rw.Address
}

// close lets C go of the worker, then closes its endpoints and the worker.
func (s *sharedWorker) close() error {
	if s == nil {
		return nil
	}
	s.cs.Free() // after this, no C call posts or progresses here
	var errs []error
	for _, ep := range s.eps {
		errs = append(errs, ep.Close())
	}
	s.eps = nil
	errs = append(errs, s.rw.Close())
	return errors.Join(errs...)
}

// connect makes the endpoints to the members whose context ranks are
// ranks (cards: their context cards) that the shared worker lacks.
func (s *sharedWorker) connect(rank int, ranks []uint32, cards []card) error {
	s.cs.Lock()
	defer s.cs.Unlock()
	for r, cr := range ranks {
		if s.eps[cr] != nil && s.eps[cr].Err() == nil {
			continue
		}
		ep, err := s.rw.Worker.Connect(cards[r].shared, ucx.EndpointOptions{NoPeerErrors: cards[r].host == cards[rank].host})
		if err != nil {
			return fmt.Errorf("shared worker: connecting rank %d: %w", r, err)
		}
		s.eps[cr] = ep
		if err := s.cs.SetEndpoint(cr, ep); err != nil {
			return err
		}
	}
	return nil
}

// DropShared closes the context's shared worker and takes its address off
// the context card, before UCC publishes the card: for a context whose
// worker C cannot list (the UCC adapter's table of them is full). Its
// teams then run their calls on their own workers, and the members that
// would have seen the address must too (SharedProgram: a member without
// one), or they would run the calls on the context path and wait there
// for this rank for ever.
func (c *Context) DropShared() error {
	if c.shared == nil {
		return nil
	}
	cd, err := decodeCard(c.rv.card)
	if err != nil {
		return resourceErr{fmt.Errorf("context card: %w", err)}
	}
	cd.shared = nil
	c.rv.card = encodeCard(cd)
	err = c.shared.close()
	c.shared = nil
	if err != nil {
		return resourceErr{err}
	}
	return nil
}

// SharedC is the context's shared worker as C sees it; nil: none.
func (c *Context) SharedC() *cexec.Shared {
	if c.shared == nil {
		return nil
	}
	return c.shared.cs
}

// SharedProgram is rank's program of call a lowered for the context path,
// with the endpoints to its members (context ranks ranks, in team order)
// connected; nil where the team runs the call itself: a shape the context
// path does not serve, or one that Go would refuse (the team's call then
// says why). Every member reaches the same verdict on the same call.
func (t *Team) SharedProgram(a Args, ranks []uint32) (*cexec.Program, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.ctx.shared
	if s == nil || t.link == nil || len(ranks) != t.size || t.size > cexec.SharedMaxSize {
		return nil, nil
	}
	for _, c := range t.link.peers {
		if len(c.shared) == 0 {
			return nil, nil // a member's context has no shared worker
		}
	}
	k, ok := t.sharedCall(a)
	if !ok {
		return nil, nil
	}
	entry, err := t.planFor(a, k.alg, k.fallback, k.bytes, k.mem, t.deviceChunks(a, k.bytes, k.mem))
	if err != nil {
		return nil, nil
	}
	prog := entry.program(t.rank)
	if tag := cexec.MaxStepTag(prog); tag >= cexec.SharedSteps {
		return nil, fmt.Errorf("context path: %s step tag %d beyond the shared worker's %d", entry.plan.Algorithm, tag, cexec.SharedSteps)
	}
	layout, shift := cpathLayout(a)
	dtype, op := a.Coll.Reduction(a.Dtype, a.Op)
	p, err := cexec.Lower(prog, entry.plan.Algorithm, dtype, op, layout, shift)
	if err != nil {
		return nil, err
	}
	if err := s.connect(t.rank, ranks, t.link.peers); err != nil {
		p.Release()
		return nil, resourceErr{err}
	}
	return p, nil
}

// sharedCall resolves a call the context path may run: host memory, a
// collective of fixed shape at most cpath_max bytes, one that the team's
// selection gives to the sched program on one Machine (no engine, no
// lanes). Caller holds t.mu.
func (t *Team) sharedCall(a Args) (*Call, bool) {
	if !t.cpathShape(a, false) {
		return nil, false
	}
	mem, err := memoryOf(a)
	if err != nil || !mem.IsHost() || !t.cpathWanted(t.laneCount()) {
		return nil, false
	}
	alg, fallback, err := t.algorithmFor(a, mem)
	if err != nil || len(alg) > cexec.MaxAlgName || len(fallback) > cexec.MaxAlgName {
		return nil, false
	}
	B, err := t.callBytes(a) // refuses an overflow and a bcast root out of range
	if err != nil {
		return nil, false
	}
	k := &Call{Args: a, mem: mem, alg: alg, fallback: fallback, bytes: B}
	for _, rk := range selection {
		if rk.takes(t, k) {
			return k, rk.name == "machine"
		}
	}
	return nil, false
}

// CheckCards is the context path's failure detector for a team that has
// no Go side: the processes on this host of the members whose context
// cards are cards (rank's among them). nil: every peer may still come.
func CheckCards(rank int, cards [][]byte) error {
	all := make([]card, len(cards))
	for r, b := range cards {
		c, err := decodeCard(b)
		if err != nil {
			return Invalid("context card of rank %d: %v", r, err)
		}
		all[r] = c
	}
	if rank < 0 || rank >= len(all) {
		return Invalid("rank %d of a team of %d", rank, len(all))
	}
	if w := newPeerWatch(rank, all); w != nil {
		return w.Check()
	}
	return nil
}
