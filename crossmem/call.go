package crossmem

import (
	"errors"
	"fmt"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
)

// Serves reports whether c has an algorithm here.
func Serves(c coll.Collective) bool { return c == coll.Allreduce || c == coll.Allgather }

// Config is one call.
type Config struct {
	Collective coll.Collective // allreduce or allgather
	Rank, Size int
	// Src and Dst are this rank's host buffers: B and B bytes for an
	// allreduce, B and Size*B for an allgather. In place, Src is Dst (an
	// allreduce) or Dst's block Rank (an allgather).
	Src, Dst  exec.Region
	Dtype     coll.Dtype
	Op        coll.Op
	Transport exec.Transport
	Team      *Team
	// Watch checks the peers while the call waits (nil: none); Deadline
	// ends a call that has not finished by then (zero: none). See exec's
	// timeout policy.
	Watch    exec.Watch
	Deadline time.Time
}

type callState int

const (
	stIdle      callState = iota
	stArriving            // waiting for every ARRIVE
	stVerdict             // waiting for every VERDICT
	stFinishing           // DONE sent; waiting for every DONE and this rank's sends
	stEnding              // ending with err once this rank's sends are done
	stDone
	stFailed
)

// Token: the high byte marks the package's tokens (bit 63 clear, as
// exec.Completion asks of callers that are not transports); then the
// call's epoch, the message's kind (its tag, +kinds for a send) and the peer.
const tokenMark = uint64(0x58) << 56

const kinds = 3 // ARRIVE, VERDICT, DONE

// Call is one call of the protocol, driven like exec.Call. A Call can be
// reused for the next call of the same team.
type Call struct {
	cfg      Config
	epoch    uint32
	state    callState
	err      error
	ending   error // stEnding's error
	pace     exec.Pace
	peers    []arrive
	in       [][msgLen]byte      // receive buffers, index kind*Size + peer
	out      [kinds][msgLen]byte // this rank's message of each kind, the same to every peer
	got      [kinds]int
	gotFrom  []bool // index kind*Size + peer
	inflight map[uint64]bool
	comps    []exec.Completion
	mark     time.Time // the end of the last phase timed (Stats)
}

// lap adds the time since the last mark to *d.
func (c *Call) lap(d *time.Duration) {
	now := time.Now()
	*d += now.Sub(c.mark)
	c.mark = now
}

func (c *Call) token(kind, peer int, send bool) uint64 {
	if send {
		kind += kinds
	}
	return tokenMark | uint64(c.epoch&0xffff)<<32 | uint64(kind)<<24 | uint64(peer)
}

func split(tok uint64) (epoch uint32, kind, peer int, send bool) {
	kind = int(tok>>24) & 0xff
	return uint32(tok>>32) & 0xffff, kind % kinds, int(tok & 0xffffff), kind >= kinds
}

// Begin starts the call: it posts every receive the call needs and sends
// ARRIVE. Nothing blocks.
func (c *Call) Begin(cfg Config) error {
	switch {
	case !Serves(cfg.Collective):
		return fmt.Errorf("crossmem: no algorithm for %s", cfg.Collective)
	case cfg.Size < 1 || cfg.Rank < 0 || cfg.Rank >= cfg.Size || cfg.Size > 1<<12:
		return fmt.Errorf("crossmem: rank %d of a team of %d", cfg.Rank, cfg.Size)
	case !cfg.Src.IsHost() || !cfg.Dst.IsHost():
		return fmt.Errorf("crossmem: %v and %v: host memory only", cfg.Src, cfg.Dst)
	case cfg.Team == nil:
		return errors.New("crossmem: no team")
	case cfg.Dtype.Size() == 0 || cfg.Dst.Len()%int64(cfg.Dtype.Size()) != 0:
		return fmt.Errorf("crossmem: %d bytes of %v", cfg.Dst.Len(), cfg.Dtype)
	}
	P := cfg.Size
	*c = Call{cfg: cfg, epoch: c.epoch + 1, in: c.in[:0], inflight: c.inflight, comps: c.comps[:0],
		peers: c.peers[:0], gotFrom: c.gotFrom[:0],
		pace: exec.Pace{Deadline: cfg.Deadline, Watch: cfg.Watch}}
	c.mark = time.Now()
	c.pace.Begin(c.mark)
	if c.inflight == nil {
		c.inflight = map[uint64]bool{}
	}
	clear(c.inflight)
	for len(c.in) < kinds*P {
		c.in = append(c.in, [msgLen]byte{})
	}
	c.gotFrom = append(c.gotFrom, make([]bool, kinds*P)...)
	c.peers = append(c.peers, make([]arrive, P)...)
	c.state = stArriving
	for _, kind := range c.kindsUsed() {
		for q := 0; q < P; q++ {
			if q == cfg.Rank {
				continue
			}
			p := exec.Post{Peer: q, Tag: uint32(kind), Buf: exec.HostRegion(c.in[kind*P+q][:]), Token: c.token(kind, q, false)}
			if err := c.post(cfg.Transport.PostRecv, &p); err != nil {
				return c.fail(err)
			}
		}
	}
	t := cfg.Team
	putArrive(c.out[tagArrive][:], arrive{pid: t.reader.Pid(), cookieAddr: t.cookieAddr(), cookie: *t.cookie,
		src: uint64(cfg.Src.Addr()), srcLen: cfg.Src.Len(), dst: uint64(cfg.Dst.Addr()), dstLen: cfg.Dst.Len()})
	c.peers[cfg.Rank] = arrive{src: uint64(cfg.Src.Addr()), srcLen: cfg.Src.Len(), dst: uint64(cfg.Dst.Addr()), dstLen: cfg.Dst.Len()}
	return c.sendAll(tagArrive)
}

// kindsUsed are the messages this call exchanges.
func (c *Call) kindsUsed() []int {
	k := []int{tagArrive, tagDone}
	if !c.cfg.Team.verified {
		k = append(k, tagVerdict)
	}
	return k
}

func (c *Call) post(f func(*exec.Post) error, p *exec.Post) error {
	if err := f(p); err != nil {
		return fmt.Errorf("crossmem: rank %d, message to or from rank %d: %w", c.cfg.Rank, p.Peer, err)
	}
	c.inflight[p.Token] = true
	return nil
}

// sendAll sends this rank's message of kind to every peer.
func (c *Call) sendAll(kind int) error {
	for q := 0; q < c.cfg.Size; q++ {
		if q == c.cfg.Rank {
			continue
		}
		p := exec.Post{Peer: q, Tag: uint32(kind), Buf: exec.HostRegion(c.out[kind][:]), Token: c.token(kind, q, true)}
		if err := c.post(c.cfg.Transport.PostSend, &p); err != nil {
			return err
		}
	}
	return nil
}

// Progress moves the call on until it is done or nothing happens by wait
// (a zero wait polls once). It returns done once this rank's part is over
// (its results are in its buffer and no peer reads its buffers any more),
// and the call's error on failure; later calls return the same.
func (c *Call) Progress(wait time.Time) (bool, error) {
	for {
		switch c.state {
		case stDone:
			return true, nil
		case stFailed:
			return false, c.err
		}
		if moved, err := c.advance(); err != nil {
			return false, c.fail(err)
		} else if moved {
			continue
		}
		now := time.Now()
		if err := c.pace.Check(now, &wait); err != nil {
			return false, c.fail(fmt.Errorf("crossmem: rank %d %s after %v: %w", c.cfg.Rank, c.cfg.Collective, now.Sub(c.pace.Start).Round(time.Millisecond), err))
		}
		comps, err := c.cfg.Transport.Wait(wait, c.comps[:0])
		c.comps = comps[:0]
		if err != nil {
			return false, c.fail(fmt.Errorf("crossmem: rank %d: transport: %w", c.cfg.Rank, err))
		}
		if len(comps) == 0 {
			return false, nil
		}
		for _, comp := range comps {
			if err := c.complete(comp); err != nil {
				return false, c.fail(err)
			}
		}
	}
}

// advance takes the steps the state allows; moved says something changed.
func (c *Call) advance() (bool, error) {
	P := c.cfg.Size
	switch c.state {
	case stArriving:
		if c.got[tagArrive] < P-1 {
			return false, nil
		}
		if ended, err := c.readArrivals(); ended || err != nil {
			return true, err
		}
		c.lap(&c.cfg.Team.stats.Arrive)
		if c.cfg.Team.verified {
			return true, c.work()
		}
		c.state = stVerdict
		putWord(c.out[tagVerdict][:], c.probe())
		return true, c.sendAll(tagVerdict)
	case stVerdict:
		if c.got[tagVerdict] < P-1 {
			return false, nil
		}
		errs := []error{readWord(c.out[tagVerdict][:])}
		for q := 0; q < P; q++ {
			if q != c.cfg.Rank {
				if err := readWord(c.in[tagVerdict*P+q][:]); err != nil {
					errs = append(errs, rankErr(q, err))
				}
			}
		}
		if err := errors.Join(errs...); err != nil {
			c.end(unreadable{fmt.Errorf("crossmem: %w", err)})
			return true, nil
		}
		c.cfg.Team.verified = true
		c.lap(&c.cfg.Team.stats.Verdict)
		return true, c.work()
	case stFinishing:
		if c.got[tagDone] == P-1 && len(c.inflight) == 0 {
			c.state = stDone
			c.lap(&c.cfg.Team.stats.Done)
			c.cfg.Team.stats.Calls++
			return true, nil
		}
	case stEnding:
		if len(c.inflight) == 0 {
			c.state, c.err = stFailed, c.ending
			return false, c.err
		}
	}
	return false, nil
}

// readArrivals decodes every peer's ARRIVE: a rank that cannot take part
// makes the call ErrUnreadable on every rank (each sees the same
// ARRIVEs: ended); buffers of other lengths than this rank's fail it.
func (c *Call) readArrivals() (ended bool, err error) {
	P := c.cfg.Size
	var cannot, disagree []error
	for q := 0; q < P; q++ {
		if q == c.cfg.Rank {
			continue
		}
		a, err := readArrive(c.in[tagArrive*P+q][:])
		if err != nil {
			cannot = append(cannot, rankErr(q, err))
			continue
		}
		if a.srcLen != c.cfg.Src.Len() || a.dstLen != c.cfg.Dst.Len() {
			disagree = append(disagree, fmt.Errorf("rank %d's buffers hold %d and %d bytes, rank %d's %d and %d: the ranks disagree on the call",
				q, a.srcLen, a.dstLen, c.cfg.Rank, c.cfg.Src.Len(), c.cfg.Dst.Len()))
		}
		c.peers[q] = a
	}
	if len(disagree) > 0 {
		return false, fmt.Errorf("crossmem: %w", errors.Join(disagree...))
	}
	if len(cannot) > 0 {
		c.end(unreadable{fmt.Errorf("crossmem: %w", errors.Join(cannot...))})
		return true, nil
	}
	return false, nil
}

// probe reads every peer's cookie: nil if each read gives the number the
// peer sent.
func (c *Call) probe() error {
	var errs []error
	var got [8]byte
	for q := 0; q < c.cfg.Size; q++ {
		if q == c.cfg.Rank {
			continue
		}
		a := c.peers[q]
		if err := c.cfg.Team.reader.Read(got[:], a.pid, a.cookieAddr); err != nil {
			errs = append(errs, fmt.Errorf("rank %d cannot read rank %d (process %d): %w", c.cfg.Rank, q, a.pid, err))
			continue
		}
		if v := leUint64(got[:]); v != a.cookie {
			errs = append(errs, fmt.Errorf("rank %d reads %#x at rank %d's cookie (process %d), not %#x: another process by that id (a pid namespace apart)", c.cfg.Rank, v, q, a.pid, a.cookie))
		}
	}
	return errors.Join(errs...)
}

// work runs this rank's part once every rank is known to read the others
// (an allreduce reduces its block and writes it out, an allgather reads
// everything) and says DONE.
func (c *Call) work() error {
	if c.cfg.Collective == coll.Allgather {
		err := c.gatherAll()
		c.lap(&c.cfg.Team.stats.Work)
		return c.finish(err)
	}
	err := c.reduceBlock()
	c.lap(&c.cfg.Team.stats.Work)
	return c.finish(err)
}

// finish says DONE and waits for every peer's; where this rank's reads
// failed (err), DONE carries why, so that no peer waits for this rank,
// and the call ends with err once the sends are out.
func (c *Call) finish(err error) error {
	putWord(c.out[tagDone][:], err)
	if serr := c.sendAll(tagDone); serr != nil {
		return serr
	}
	if err != nil {
		c.end(fmt.Errorf("crossmem: rank %d %s: %w", c.cfg.Rank, c.cfg.Collective, err))
		return nil
	}
	c.state = stFinishing
	return nil
}

// end ends the call with err once this rank's sends are done; the
// receives it no longer needs are withdrawn.
func (c *Call) end(err error) {
	for tok := range c.inflight {
		if _, _, _, send := split(tok); !send {
			c.cfg.Transport.Cancel(tok)
			delete(c.inflight, tok)
		}
	}
	c.state, c.ending = stEnding, err
}

// complete feeds one completion.
func (c *Call) complete(comp exec.Completion) error {
	epoch, kind, q, send := split(comp.Token)
	if comp.Token&(0xff<<56) != tokenMark || epoch != c.epoch&0xffff || !c.inflight[comp.Token] {
		return nil // an earlier call's, or withdrawn
	}
	delete(c.inflight, comp.Token)
	if comp.Err != nil {
		return fmt.Errorf("crossmem: rank %d %s, message with rank %d: %w", c.cfg.Rank, c.cfg.Collective, q, comp.Err)
	}
	if send {
		return nil
	}
	if comp.Len != msgLen {
		return fmt.Errorf("crossmem: rank %d sent %d bytes where the protocol's messages take %d", q, comp.Len, msgLen)
	}
	P := c.cfg.Size
	c.got[kind]++
	c.gotFrom[kind*P+q] = true
	if kind == tagDone {
		if err := readWord(c.in[kind*P+q][:]); err != nil {
			return fmt.Errorf("crossmem: rank %d %s: rank %d failed: %s", c.cfg.Rank, c.cfg.Collective, q, err)
		}
	}
	return nil
}

// Abort ends an unfinished call (a caller giving up): what is in flight
// is cancelled.
func (c *Call) Abort(cause error) error {
	if c.state == stDone || c.state == stFailed {
		return c.err
	}
	return c.fail(fmt.Errorf("crossmem: rank %d %s: %w", c.cfg.Rank, c.cfg.Collective, cause))
}

// fail cancels what is in flight and records err. No read runs once it
// returns (reads run inside Progress).
func (c *Call) fail(err error) error {
	if c.state == stFailed {
		return c.err
	}
	errs := []error{err}
	for tok := range c.inflight {
		errs = append(errs, c.cfg.Transport.Cancel(tok))
		delete(c.inflight, tok)
	}
	c.state, c.err = stFailed, errors.Join(errs...)
	return c.err
}

func leUint64(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}
