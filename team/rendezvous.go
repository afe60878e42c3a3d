package team

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/ucx"
)

// A context's rendezvous: how the teams of a UCC context find each other's
// workers without a round trip at team creation.
//
// The context opens one UCX worker of its own and publishes, as its UCC
// context address, a card (the team card's format, card.addr being this
// worker's address). UCC exchanges the context addresses once per context
// (or, where the context had no out-of-band allgather, as part of every
// team's creation, whatever layers are installed), so a new team reads
// every member's card from UCC and learns where every member runs without
// sending anything. Only a team that goring actually runs a collective on
// opens its own workers; it then sends its team card to every member over
// the rendezvous workers (teamLink) and connects once all have arrived.

// rendezvous is a context's worker for the card exchanges of its lazy
// teams. Every use of the worker holds mu: teams of one context may be
// progressed from several threads.
type rendezvous struct {
	mu   sync.Mutex
	w    *ucx.Worker
	card []byte                   // this process's context card (encodeCard)
	eps  map[string]*ucx.Endpoint // by peer worker address
	gens map[linkKey]uint32       // lazy teams made so far, per key (teamLink's gen)
	bufs [][]byte                 // receive buffers of ended exchanges, for the next ones
}

// maxPooledLinkBufs bounds the receive buffers a context keeps: as many as
// exchanges usually run at once.
const maxPooledLinkBufs = 4

// linkBuf is a receive buffer of maxLinkMessage bytes: a pooled one, or a
// new one (256 KiB to zero: more than the rest of a small team's first
// call). Caller holds rv.mu.
func (rv *rendezvous) linkBuf() []byte {
	if n := len(rv.bufs); n > 0 {
		b := rv.bufs[n-1]
		rv.bufs = rv.bufs[:n-1]
		return b
	}
	return make([]byte, maxLinkMessage)
}

// putLinkBuf gives back a buffer no receive uses any more. Caller holds
// rv.mu.
func (rv *rendezvous) putLinkBuf(b []byte) {
	if b != nil && len(rv.bufs) < maxPooledLinkBufs {
		rv.bufs = append(rv.bufs, b)
	}
}

// linkKey names a lazy team's exchange among those of its context: UCC's
// team key (team id, scope, scope id) and a hash of its members' cards.
type linkKey struct {
	key     uint32
	members uint64
}

func openRendezvous(ctx *Context) (*rendezvous, error) {
	rw, err := launch.OpenRankWorker(ctx.uctx)
	if err != nil {
		return nil, err
	}
	w, addr := rw.Worker, rw.Address
	host := nodeName()
	pid := os.Getpid()
	start, err := launch.ProcStart(pid)
	if err != nil {
		pid, start = 0, 0 // as newTeam: a process that cannot be watched
	}
	c := card{host: host, pid: pid, start: start, addr: addr, gpu: soleGPU(ctx), cross: crossSetting(ctx), shared: ctx.shared.address()}
	return &rendezvous{w: w, card: encodeCard(c), eps: map[string]*ucx.Endpoint{}, gens: map[linkKey]uint32{}}, nil
}

// endpoint is the rendezvous endpoint to the worker at addr, made on first
// use. Peers on other hosts get UCX's peer-failure mode, as the data
// plane's endpoints (team.connect). Caller holds rv.mu.
func (rv *rendezvous) endpoint(addr []byte, sameHost bool) (*ucx.Endpoint, error) {
	if ep := rv.eps[string(addr)]; ep != nil && ep.Err() == nil {
		return ep, nil
	}
	ep, err := rv.w.Connect(addr, ucx.EndpointOptions{NoPeerErrors: sameHost})
	if err != nil {
		return nil, err
	}
	rv.eps[string(addr)] = ep
	return ep, nil
}

// next counts a new lazy team of key k: every member makes the teams of
// one key and member set in the same order (MPI's communicator creation
// is collective), so the count tells one such team from a previous one
// whose messages may still be in flight.
func (rv *rendezvous) next(k linkKey) uint32 {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	rv.gens[k]++
	return rv.gens[k]
}

func (rv *rendezvous) close() error {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	var errs []error
	for _, ep := range rv.eps {
		errs = append(errs, ep.Close())
	}
	rv.eps = nil
	errs = append(errs, rv.w.Close())
	return errors.Join(errs...)
}

// A link message is "GRL1", the members' hash (uint64), the team's count
// (uint32, rendezvous.next) and the sender's team card, little-endian; its
// tag is the team key in the high 32 bits and the sender's team rank in
// the low ones.
const (
	linkMagic  = "GRL1"
	linkHeader = 4 + 8 + 4
	// maxLinkMessage bounds a received message: a team card holds every
	// lane's worker address (64 lanes at most), each a few hundred bytes.
	maxLinkMessage = 256 << 10
	linkKeyMask    = ucx.Tag(0xffffffff) << 32
)

func linkTag(key uint32, sender int) ucx.Tag { return ucx.Tag(key)<<32 | ucx.Tag(uint32(sender)) }

func encodeLink(members uint64, gen uint32, teamCard []byte) []byte {
	b := make([]byte, 0, linkHeader+len(teamCard))
	b = append(b, linkMagic...)
	b = binary.LittleEndian.AppendUint64(b, members)
	b = binary.LittleEndian.AppendUint32(b, gen)
	return append(b, teamCard...)
}

// decodeLink returns the team card of a message for (members, gen), or
// ok=false for a message of another team (a stale one of a team that was
// destroyed before its exchange ended), or an error for a malformed one.
func decodeLink(b []byte, members uint64, gen uint32) (teamCard []byte, ok bool, err error) {
	if len(b) < linkHeader || string(b[:4]) != linkMagic {
		return nil, false, errors.New("not a goring link message of this version")
	}
	if binary.LittleEndian.Uint64(b[4:]) != members || binary.LittleEndian.Uint32(b[12:]) != gen {
		return nil, false, nil
	}
	return b[linkHeader:], true, nil
}

// membersHash identifies a team by its members' processes (host, pid and
// start time, in rank order): FNV-1a over the cards' identities.
func membersHash(all []card) uint64 {
	h := uint64(14695981039346656037)
	mix := func(b []byte) {
		for _, x := range b {
			h = (h ^ uint64(x)) * 1099511628211
		}
	}
	for _, c := range all {
		mix([]byte(c.host))
		mix(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint32(nil, uint32(c.pid)), c.start))
		mix([]byte{0xff})
	}
	return h
}

// checkLinkSender checks a received tag's sender field against the team.
func checkLinkSender(tag ucx.Tag, size int) (int, error) {
	s := int(uint32(tag))
	if s < 0 || s >= size {
		return 0, fmt.Errorf("link message from rank %d of a team of %d", s, size)
	}
	return s, nil
}
