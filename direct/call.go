package direct

import (
	"errors"
	"fmt"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
)

// Config is one call.
type Config struct {
	Collective coll.Collective
	Rank, Size int
	Root       int // a bcast's
	// Src and Dst are this rank's buffers: B and B bytes for an
	// allreduce, B and Size*B for an allgather, Size*B and B for a
	// reduce_scatter, B and B for a bcast (the root's Src is the input;
	// UCC gives one buffer, Src is Dst). In place, Src is Dst (an
	// allreduce), Dst is Src's block Rank (a reduce_scatter) or Src is
	// Dst's block Rank (an allgather).
	Src, Dst  exec.Region
	Dtype     coll.Dtype
	Op        coll.Op
	Transport exec.Transport
	// The backend, exactly one: Device (rank 0 maps every rank's buffers
	// and does the work on its executor) or Host (every rank reads its
	// part of the peers' buffers).
	Device *Device
	Host   *Host
	// Watch checks the peers while the call waits (nil: none); Deadline
	// ends a call that has not finished by then (zero: none). See exec's
	// timeout policy.
	Watch    exec.Watch
	Deadline time.Time
}

// backend is what differs between the two ways of reaching the peers'
// buffers; the protocol (Call) is the same for both.
type backend interface {
	// check refuses a call the backend cannot run (Begin's checks). It
	// takes the configuration by value: a pointer through this interface
	// would move every Begin's Config to the heap.
	check(cfg Config) error
	// everyone reports whether every rank works on the peers' buffers
	// (host) or rank 0 alone does (device).
	everyone() bool
	// fallback is the sentinel of a call no rank could reach the buffers
	// of: ErrUnmapped, ErrUnreadable.
	fallback() error
	// arrive writes this rank's names of its buffers (b, at most
	// msgLen-bodyAt bytes); an error says why it cannot take part.
	arrive(c *Call, b []byte) error
	// open makes a working rank's access to every peer's buffers from
	// their ARRIVEs (bodies: index rank, this rank's nil); an error
	// wrapping fallback() ends the call alike with the fallback.
	open(c *Call, bodies [][]byte) error
	// verdict reports whether the ranks must first tell each other
	// whether they can read the others (a VERDICT round), and probe is
	// this rank's answer; passed records a round every rank passed.
	verdict() bool
	probe(c *Call) error
	passed()
	// work does (or starts) this rank's part; moved says it changed
	// something, done that the part is over. poll is its turn while it
	// waits; step takes a completion of its own (ownsToken).
	work(c *Call) (moved, done bool, err error)
	poll(c *Call, now time.Time, wait *time.Time) (bool, error)
	ownsToken(c *Call, tok uint64) bool
	step(c *Call, comp exec.Completion) error
	// stop ends the work early (what is running stops touching the
	// buffers before it returns) and releases what open made; it returns
	// what the stopping said.
	stop(c *Call) []error
	// timing is where the phases' times go (nil: nowhere).
	timing() *Stats
}

// Stats is where a rank's calls of a team spent their time, summed over
// the calls that completed: waiting for every ARRIVE, the verdict round,
// the work (on the host: reducing its block and writing it out, or
// reading the blocks; on the device, the leader's mapping, plan and
// device work), and waiting for every DONE (a device backend's rank
// other than the leader: its whole call).
type Stats struct {
	Calls                       int
	Arrive, Verdict, Work, Done time.Duration
}

type callState int

const (
	stIdle      callState = iota
	stArriving            // a working rank waits for every ARRIVE
	stVerdict             // waiting for every VERDICT
	stWorking             // this rank's part is running
	stFinishing           // waiting for every worker's DONE and this rank's sends
	stEnding              // ending with err once this rank's sends are done
	stDone
	stFailed
)

// Tokens: the high byte marks the package's (bit 63 clear, as
// exec.Completion asks of callers that are not transports); then the
// call's epoch, the kind (a message's tag, +kinds for a send; kindWork
// for the backend's own) and the peer or the backend's index.
const (
	tokenMark = uint64(0x44) << 56
	kindWork  = 2 * kinds
)

// Call is one call of the protocol, driven like exec.Call: Begin, then
// Progress with a zero wait from a progress function, or exec.Drive. A
// Call can be reused for the next call of the same team.
type Call struct {
	cfg      Config
	be       backend
	epoch    uint32
	state    callState
	err      error
	ending   error // stEnding's error
	failed   error // why a host call failed, told once every working peer's DONE is in (finish)
	pace     exec.Pace
	in       [][msgLen]byte      // receive buffers, index kind*Size + peer
	out      [kinds][msgLen]byte // this rank's message of each kind, the same to every peer
	got      [kinds]int
	inflight map[uint64]bool // transport operations posted and not completed
	comps    []exec.Completion
	mark     time.Time // the end of the last phase timed (Stats)
	wait     time.Time // Progress's wait (see there)
	posting  exec.Post // the message being posted (see post)

	bodies  [][]byte // the peers' ARRIVE bodies, index rank
	scratch Stats    // the phases' times where the backend keeps none

	dev  deviceCall // the device backend's state
	host hostCall   // the host backend's
}

func (c *Call) token(kind, idx int, send bool) uint64 {
	if send {
		kind += kinds
	}
	return tokenMark | uint64(c.epoch&0xffff)<<32 | uint64(kind)<<24 | uint64(idx)
}

func split(tok uint64) (epoch uint32, kind, idx int, send bool) {
	k := int(tok>>24) & 0xff
	if k < 2*kinds {
		send, k = k >= kinds, k%kinds
	}
	return uint32(tok>>32) & 0xffff, k, int(tok & 0xffffff), send
}

// worker reports whether rank q works on the peers' buffers.
func (c *Call) worker(q int) bool { return q == 0 || c.be.everyone() }

// workers is the number of working ranks other than this one.
func (c *Call) workers() int {
	if c.be.everyone() {
		return c.cfg.Size - 1
	}
	if c.cfg.Rank == 0 {
		return 0
	}
	return 1
}

// Begin starts the call: it posts every receive the call needs and sends
// ARRIVE to the working ranks. Nothing blocks.
func (c *Call) Begin(cfg Config) error {
	var be backend
	switch {
	case cfg.Device != nil && cfg.Host == nil:
		be = cfg.Device
	case cfg.Host != nil && cfg.Device == nil:
		be = cfg.Host
	default:
		return errors.New("direct: a call needs one backend, Device or Host")
	}
	if cfg.Size < 1 || cfg.Rank < 0 || cfg.Rank >= cfg.Size || cfg.Size > 1<<12 {
		return fmt.Errorf("direct: rank %d of a team of %d", cfg.Rank, cfg.Size)
	}
	if err := be.check(cfg); err != nil {
		return fmt.Errorf("direct: %w", err)
	}
	P := cfg.Size
	*c = Call{cfg: cfg, be: be, epoch: c.epoch + 1, in: c.in[:0], inflight: c.inflight, comps: c.comps[:0],
		pace: exec.Pace{Deadline: cfg.Deadline, Watch: cfg.Watch}, bodies: c.bodies[:0], dev: c.dev.reuse(), host: c.host.reuse()}
	c.mark = time.Now()
	c.pace.Begin(c.mark)
	if c.inflight == nil {
		c.inflight = map[uint64]bool{}
	}
	clear(c.inflight)
	for len(c.in) < kinds*P {
		c.in = append(c.in, [msgLen]byte{})
	}
	me := cfg.Rank
	verdict := be.everyone() && be.verdict()
	for q := 0; q < P; q++ {
		if q == me {
			continue
		}
		if c.worker(me) {
			if err := c.recv(tagArrive, q); err != nil {
				return c.fail(err)
			}
		}
		if !c.worker(q) {
			continue
		}
		if verdict {
			if err := c.recv(tagVerdict, q); err != nil {
				return c.fail(err)
			}
		}
		if err := c.recv(tagDone, q); err != nil {
			return c.fail(err)
		}
	}
	b := c.out[tagArrive][:]
	putArrive(b, cfg.Src.Len(), cfg.Dst.Len())
	if err := be.arrive(c, b[bodyAt:]); err != nil {
		putWord(b, fmt.Errorf("cannot %w", err), be.fallback())
	}
	c.state = stFinishing
	if c.worker(me) {
		c.state = stArriving
	}
	return c.sendAll(tagArrive)
}

func (c *Call) recv(kind, q int) error {
	return c.post(false, exec.Post{Peer: q, Tag: uint32(kind), Buf: exec.HostRegion(c.in[kind*c.cfg.Size+q][:]), Token: c.token(kind, q, false)})
}

// post hands p to the transport from the call's own storage (a Post is
// only read during the call): a local whose address went to the
// interface, or a method value, would be a heap allocation per message.
func (c *Call) post(send bool, p exec.Post) error {
	c.posting = p
	var err error
	if send {
		err = c.cfg.Transport.PostSend(&c.posting)
	} else {
		err = c.cfg.Transport.PostRecv(&c.posting)
	}
	if err != nil {
		return fmt.Errorf("direct: rank %d, message to or from rank %d: %w", c.cfg.Rank, p.Peer, err)
	}
	c.inflight[p.Token] = true
	return nil
}

// sendAll sends this rank's message of kind to every peer it is for:
// ARRIVE and VERDICT to the working ranks, DONE to every rank.
func (c *Call) sendAll(kind int) error {
	for q := 0; q < c.cfg.Size; q++ {
		if q == c.cfg.Rank || (kind != tagDone && !c.worker(q)) {
			continue
		}
		if err := c.post(true, exec.Post{Peer: q, Tag: uint32(kind), Buf: exec.HostRegion(c.out[kind][:]), Token: c.token(kind, q, true)}); err != nil {
			return err
		}
	}
	return nil
}

// Progress moves the call on until it is done or nothing happens by wait
// (a zero wait polls once). It returns done once this rank's part is over
// (its results are in its buffers and no rank works on its buffers any
// more), and the call's error on failure; later calls return the same.
func (c *Call) Progress(wait time.Time) (bool, error) {
	// The wait lives in the call: its address goes to the backend's poll,
	// an interface, and a parameter's would move to the heap at every
	// poll (a progress function polls millions of times a second).
	c.wait = wait
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
		if cause := c.pace.Check(now, &c.wait); cause != nil {
			// The deadline passed or a peer left, but this rank may
			// only be late to look (an application computing between
			// polls): what arrived meanwhile (a peer's DONE, sent
			// before it left) is taken first, and the call fails only
			// once one more poll brings nothing.
			c.wait = time.Time{}
			stepped, err := c.take(now)
			if err != nil {
				return false, c.fail(err)
			}
			if stepped {
				continue
			}
			return false, c.fail(fmt.Errorf("direct: rank %d %s after %v: %w", c.cfg.Rank, c.cfg.Collective, now.Sub(c.pace.Start).Round(time.Millisecond), cause))
		}
		stepped, err := c.take(now)
		if err != nil {
			return false, c.fail(err)
		}
		if !stepped {
			return false, nil
		}
	}
}

// take is one turn of waiting in Progress: the backend's poll while this
// rank's part runs, else the transport's completions until c.wait (a
// zero or past wait polls it once). stepped reports that something came
// or changed; an error is one to fail the call with.
func (c *Call) take(now time.Time) (stepped bool, err error) {
	if c.state == stWorking {
		stepped, err := c.be.poll(c, now, &c.wait)
		if err != nil {
			return true, c.workFailed(err)
		}
		if stepped {
			return true, nil
		}
	}
	comps, err := c.cfg.Transport.Wait(c.wait, c.comps[:0])
	c.comps = comps[:0]
	if err != nil {
		return false, fmt.Errorf("direct: rank %d: transport: %w", c.cfg.Rank, err)
	}
	for _, comp := range comps {
		if err := c.complete(comp); err != nil {
			return false, err
		}
	}
	return len(comps) > 0, nil
}

// advance takes the steps the state allows; moved says something changed.
func (c *Call) advance() (bool, error) {
	switch c.state {
	case stArriving:
		if c.got[tagArrive] < c.cfg.Size-1 {
			return false, nil
		}
		c.lap(&c.statsOr().Arrive)
		if err := c.openPeers(); err != nil {
			// A verdict every rank reaches alike (each saw every ARRIVE)
			// needs no word; the leader's alone goes out in DONE.
			if c.be.everyone() {
				c.end(err)
				return true, nil
			}
			return true, c.finish(err)
		}
		if c.be.everyone() && c.be.verdict() {
			c.state = stVerdict
			putWord(c.out[tagVerdict][:], c.be.probe(c), nil)
			return true, c.sendAll(tagVerdict)
		}
		c.state = stWorking
		return true, nil
	case stVerdict:
		if c.got[tagVerdict] < c.cfg.Size-1 {
			return false, nil
		}
		errs := []error{readWord(c.out[tagVerdict][:])}
		for q := 0; q < c.cfg.Size; q++ {
			if q != c.cfg.Rank {
				if err := readWord(c.in[tagVerdict*c.cfg.Size+q][:]); err != nil {
					errs = append(errs, rankErr(q, err))
				}
			}
		}
		if err := errors.Join(errs...); err != nil {
			c.be.stop(c)
			c.end(fallback{c.be.fallback(), err})
			return true, nil
		}
		c.be.passed()
		c.lap(&c.statsOr().Verdict)
		c.state = stWorking
		return true, nil
	case stWorking:
		moved, done, err := c.be.work(c)
		if err != nil {
			return true, c.workFailed(err)
		}
		if done {
			c.be.stop(c)
			c.lap(&c.statsOr().Work)
			return true, c.finish(nil)
		}
		return moved, nil
	case stFinishing:
		if c.got[tagDone] == c.workers() && len(c.inflight) == 0 {
			if c.failed != nil {
				return true, c.failed
			}
			c.state = stDone
			c.lap(&c.statsOr().Done)
			c.statsOr().Calls++
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

// openPeers reads every ARRIVE and has the backend open the peers'
// buffers: a rank that cannot take part, or buffers the backend cannot
// open, make the call end with the fallback; buffers of other lengths
// than this rank's fail it.
func (c *Call) openPeers() error {
	P := c.cfg.Size
	var cannot, disagree []error
	bodies := c.bodies[:0]
	for q := 0; q < P; q++ {
		bodies = append(bodies, nil)
		if q == c.cfg.Rank {
			continue
		}
		b := c.in[tagArrive*P+q][:]
		srcLen, dstLen, err := arriveLens(b)
		if err != nil {
			cannot = append(cannot, fmt.Errorf("rank %d %w", q, err))
			continue
		}
		if srcLen != c.cfg.Src.Len() || dstLen != c.cfg.Dst.Len() {
			disagree = append(disagree, fmt.Errorf("rank %d's buffers hold %d and %d bytes, rank %d's %d and %d: the ranks disagree on the call",
				q, srcLen, dstLen, c.cfg.Rank, c.cfg.Src.Len(), c.cfg.Dst.Len()))
		}
		bodies[q] = b[bodyAt:]
	}
	c.bodies = bodies
	if len(disagree) > 0 {
		return errors.Join(append(disagree, cannot...)...)
	}
	if len(cannot) > 0 {
		return fallback{c.be.fallback(), errors.Join(cannot...)}
	}
	return c.be.open(c, bodies)
}

// workFailed ends this rank's part because of err: what runs is stopped
// and every rank is told why.
func (c *Call) workFailed(err error) error {
	errs := c.be.stop(c)
	return c.finish(errors.Join(append([]error{err}, errs...)...))
}

// finish says DONE (err: why this rank failed) and waits for every
// working peer's; where this rank failed, DONE carries why, so that no
// peer waits for it. The call then ends with err: on the device backend
// once the sends are out (no peer works on this rank's buffers), on the
// host once every working peer's DONE is in too (each may still be
// reading or writing them until then).
func (c *Call) finish(err error) error {
	putWord(c.out[tagDone][:], err, c.be.fallback())
	if serr := c.sendAll(tagDone); serr != nil {
		return serr
	}
	if err != nil && !c.be.everyone() {
		c.end(err)
		return nil
	}
	if err != nil {
		c.failed = fmt.Errorf("direct: rank %d %s: %w", c.cfg.Rank, c.cfg.Collective, err)
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
	c.state, c.ending = stEnding, fmt.Errorf("direct: rank %d %s: %w", c.cfg.Rank, c.cfg.Collective, err)
}

// complete feeds one completion.
func (c *Call) complete(comp exec.Completion) error {
	epoch, kind, q, send := split(comp.Token)
	if comp.Token&(0xff<<56) != tokenMark || epoch != c.epoch&0xffff {
		return nil // an earlier call's
	}
	if kind == kindWork {
		if c.state != stWorking || !c.be.ownsToken(c, comp.Token) {
			return nil
		}
		if err := c.be.step(c, comp); err != nil {
			return c.workFailed(err)
		}
		return nil
	}
	if !c.inflight[comp.Token] {
		return nil // withdrawn
	}
	delete(c.inflight, comp.Token)
	if comp.Err != nil {
		return fmt.Errorf("direct: rank %d %s, message with rank %d: %w", c.cfg.Rank, c.cfg.Collective, q, comp.Err)
	}
	if send {
		return nil
	}
	if comp.Len != msgLen {
		return fmt.Errorf("direct: rank %d sent %d bytes where the protocol's messages take %d", q, comp.Len, msgLen)
	}
	c.got[kind]++
	if kind == tagDone {
		if err := readWord(c.in[kind*c.cfg.Size+q][:]); err != nil {
			err = fmt.Errorf("direct: rank %d %s: rank %d failed the call: %w", c.cfg.Rank, c.cfg.Collective, q, err)
			if isFallback(err) {
				err = fallback{c.be.fallback(), err}
			}
			if c.be.everyone() {
				// The other working peers may still be on this rank's
				// buffers: this rank does its part and waits for their
				// DONE (finish), then fails with the first reason.
				if c.failed == nil {
					c.failed = err
				}
				return nil
			}
			return err
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
	return c.fail(fmt.Errorf("direct: rank %d %s: %w", c.cfg.Rank, c.cfg.Collective, cause))
}

// fail cancels what is in flight and records err. No work touches the
// buffers once it returns: the backend's stop waits for that.
func (c *Call) fail(err error) error {
	if c.state == stFailed {
		return c.err
	}
	errs := []error{err}
	if c.be != nil {
		errs = append(errs, c.be.stop(c)...)
	}
	for tok := range c.inflight {
		errs = append(errs, c.cfg.Transport.Cancel(tok))
		delete(c.inflight, tok)
	}
	c.state, c.err = stFailed, errors.Join(errs...)
	return c.err
}

// lap adds the time since the last mark to *d.
func (c *Call) lap(d *time.Duration) {
	now := time.Now()
	*d += now.Sub(c.mark)
	c.mark = now
}

// statsOr is the backend's Stats, or a scratch one where it keeps none.
func (c *Call) statsOr() *Stats {
	if s := c.be.timing(); s != nil {
		return s
	}
	return &c.scratch
}
