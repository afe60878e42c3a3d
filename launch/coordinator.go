package launch

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Timeouts of the protocol. The defaults keep failure detection well inside
// the 10 s the job promises: a dead rank is seen at once (its socket
// closes), a stalled one after HeartbeatTimeout.
type Options struct {
	// JoinTimeout bounds the time until every rank has said hello.
	JoinTimeout time.Duration
	// HeartbeatInterval is how often each side sends a heartbeat.
	HeartbeatInterval time.Duration
	// HeartbeatTimeout is how long silence may last before the peer is
	// declared failed.
	HeartbeatTimeout time.Duration
	// WriteTimeout bounds one frame write.
	WriteTimeout time.Duration
}

// DefaultOptions are the timeouts used when a field is zero.
var DefaultOptions = Options{
	JoinTimeout:       60 * time.Second,
	HeartbeatInterval: 500 * time.Millisecond,
	// A shared 2-core machine under load was seen to leave a process
	// unscheduled for several seconds; 7 s still fails a job within 10 s.
	HeartbeatTimeout: 7 * time.Second,
	WriteTimeout:     2 * time.Second,
}

func (o Options) withDefaults() Options {
	if o.JoinTimeout <= 0 {
		o.JoinTimeout = DefaultOptions.JoinTimeout
	}
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = DefaultOptions.HeartbeatInterval
	}
	if o.HeartbeatTimeout <= 0 {
		o.HeartbeatTimeout = DefaultOptions.HeartbeatTimeout
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultOptions.WriteTimeout
	}
	return o
}

// errBadToken is the coordinator's answer to a hello with another token.
const errBadToken = "bad job token"

// RankFailedError names the rank a job lost and why. Rank is -1 when the
// coordinator itself was lost.
type RankFailedError struct {
	Rank   int
	Reason string
}

func (e *RankFailedError) Error() string {
	if e.Rank < 0 {
		return "lost the coordinator: " + e.Reason
	}
	return fmt.Sprintf("rank %d failed: %s", e.Rank, e.Reason)
}

// FailedRank returns the rank named by a *RankFailedError in err's chain.
func FailedRank(err error) (int, bool) {
	var f *RankFailedError
	if errors.As(err, &f) {
		return f.Rank, true
	}
	return 0, false
}

type rankConn struct {
	conn     net.Conn
	wmu      sync.Mutex
	welcomed bool // the welcome went out: later traffic may follow
	beating  atomic.Bool
}

// send writes m to the rank. Until the welcome has gone out, only the
// welcome and error or failure frames do: the rank is still waiting for
// its table and must see it first.
func (rc *rankConn) send(m *message, timeout time.Duration) error {
	rc.wmu.Lock()
	defer rc.wmu.Unlock()
	if !rc.welcomed && (m.Type == msgHeartbeat || m.Type == msgGathered) {
		return nil
	}
	err := writeFrame(rc.conn, m, time.Now().Add(timeout))
	if m.Type == msgWelcome {
		rc.welcomed = true
	}
	return err
}

// Coordinator admits the ranks of one job, hands out the table of peers and
// serves Allgather, Barrier and failure broadcast. Create it with
// NewCoordinator and run Serve.
type Coordinator struct {
	ln    net.Listener
	token string
	size  int
	opt   Options

	mu       sync.Mutex
	conns    []*rankConn
	peers    []Peer
	joined   int
	welcomed bool
	bye      []bool
	byes     int
	gathers  map[uint64]*gatherState
	rejected []string
	failErr  error // a *RankFailedError, or why the job was refused

	allJoined chan struct{}
	failed    chan struct{}
	failSent  chan struct{}
	finished  chan struct{}
}

type gatherState struct {
	data [][]byte
	n    int
	size int
}

// NewCoordinator listens on addr (for example "127.0.0.1:0") for a job of
// size ranks that must present token.
func NewCoordinator(addr, token string, size int, opt Options) (*Coordinator, error) {
	if size < 1 {
		return nil, fmt.Errorf("coordinator: job size %d: want at least 1", size)
	}
	if len(token) < 16 {
		return nil, errors.New("coordinator: token shorter than 16 characters")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	return &Coordinator{
		ln: ln, token: token, size: size, opt: opt.withDefaults(),
		conns: make([]*rankConn, size), peers: make([]Peer, size), bye: make([]bool, size),
		gathers:   map[uint64]*gatherState{},
		allJoined: make(chan struct{}), failed: make(chan struct{}), failSent: make(chan struct{}), finished: make(chan struct{}),
	}, nil
}

// Addr is the address ranks dial (host:port).
func (c *Coordinator) Addr() string { return c.ln.Addr().String() }

// Rejected lists why connections were turned away (bad token, version, ...).
func (c *Coordinator) Rejected() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.rejected...)
}

// Failed is closed once a rank has failed; Err then names it.
func (c *Coordinator) Failed() <-chan struct{} { return c.failed }

// Err returns the first failure, or nil.
func (c *Coordinator) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failErr == nil {
		return nil
	}
	return c.failErr
}

// Serve runs the job's control plane until every rank has said bye (nil), a
// rank fails (*RankFailedError) or ctx ends. It closes the listener and all
// connections before it returns.
func (c *Coordinator) Serve(ctx context.Context) error {
	defer c.shutdown()
	go c.acceptLoop()
	joinTimer := time.NewTimer(c.opt.JoinTimeout)
	defer joinTimer.Stop()
	hb := time.NewTicker(c.opt.HeartbeatInterval)
	defer hb.Stop()
	for {
		select {
		case <-ctx.Done():
			c.fail(-1, "job cancelled: "+ctx.Err().Error())
			return ctx.Err()
		case <-c.failed:
			<-c.failSent
			return c.Err()
		case <-c.finished:
			return nil
		case <-joinTimer.C:
			if missing := c.missing(); len(missing) > 0 {
				c.fail(missing[0], fmt.Sprintf("did not join within %v (missing ranks %v%s)", c.opt.JoinTimeout, missing, c.rejectNote()))
				return c.Err()
			}
		case <-hb.C:
			// Asynchronous, so a rank slow to take a frame delays nobody's
			// heartbeat; a rank that is still sending skips this beat.
			c.heartbeat()
		}
	}
}

func (c *Coordinator) rejectNote() string {
	r := c.Rejected()
	if len(r) == 0 {
		return ""
	}
	return "; rejected: " + strings.Join(r, "; ")
}

func (c *Coordinator) missing() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var m []int
	for r, rc := range c.conns {
		if rc == nil {
			m = append(m, r)
		}
	}
	return m
}

// admitted reports whether rank r has been admitted.
func (c *Coordinator) admitted(r int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return r >= 0 && r < c.size && c.conns[r] != nil
}

func (c *Coordinator) acceptLoop() {
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			return
		}
		go c.handle(conn)
	}
}

func (c *Coordinator) reject(conn net.Conn, why string) {
	c.mu.Lock()
	if len(c.rejected) < 16 {
		c.rejected = append(c.rejected, why)
	}
	c.mu.Unlock()
	_ = writeFrame(conn, &message{Type: msgError, Rank: -1, Err: why}, time.Now().Add(c.opt.WriteTimeout))
	conn.Close()
}

// admit checks a hello and registers the rank; it returns the rank's
// connection or an error to send back.
func (c *Coordinator) admit(conn net.Conn, m *message) (*rankConn, error) {
	if m.Type != msgHello {
		return nil, fmt.Errorf("expected hello, got %q", m.Type)
	}
	if m.Version != ProtocolVersion {
		return nil, fmt.Errorf("protocol version %d, coordinator speaks %d", m.Version, ProtocolVersion)
	}
	if subtle.ConstantTimeCompare([]byte(m.Token), []byte(c.token)) != 1 {
		return nil, errors.New(errBadToken)
	}
	if m.Size != c.size {
		return nil, fmt.Errorf("rank %d says the job has %d ranks, coordinator expects %d", m.Rank, m.Size, c.size)
	}
	if m.Rank < 0 || m.Rank >= c.size {
		return nil, fmt.Errorf("rank %d out of range [0,%d)", m.Rank, c.size)
	}
	if m.Peer == nil {
		return nil, fmt.Errorf("rank %d: hello without locality", m.Rank)
	}
	if len(m.Peer.Host) > 255 {
		return nil, fmt.Errorf("rank %d: hostname longer than 255 bytes", m.Rank)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failErr != nil {
		return nil, errors.New("job already failed")
	}
	if c.conns[m.Rank] != nil {
		return nil, fmt.Errorf("rank %d joined twice", m.Rank)
	}
	rc := &rankConn{conn: conn}
	c.conns[m.Rank] = rc
	p := *m.Peer
	p.Rank = m.Rank
	c.peers[m.Rank] = p
	c.joined++
	return rc, nil
}

func (c *Coordinator) handle(conn net.Conn) {
	m, err := readFrame(conn, time.Now().Add(c.opt.JoinTimeout))
	if err != nil {
		c.reject(conn, "reading hello: "+err.Error())
		return
	}
	_, err = c.admit(conn, m)
	if err != nil {
		c.reject(conn, err.Error())
		return
	}
	rank := m.Rank
	c.mu.Lock()
	ready := c.joined == c.size && !c.welcomed
	if ready {
		c.welcomed = true
	}
	c.mu.Unlock()
	if ready {
		close(c.allJoined)
		peers := append([]Peer(nil), c.peers...)
		welcome := &message{Type: msgWelcome, Rank: -1, Size: c.size, Peers: peers}
		// Every hello fits in a frame, but the welcome carries them all:
		// one that does not fit could not be sent, and the ranks would
		// wait for it until the join timeout. Tell them why instead.
		if body, err := json.Marshal(welcome); err != nil || len(body) > MaxFrameBytes {
			why := fmt.Sprintf("the table of %d ranks is %d bytes, over the protocol's frame limit of %d bytes: the ranks' payloads are too large for this many ranks", c.size, len(body), MaxFrameBytes)
			if err != nil {
				why = "encoding the table of ranks: " + err.Error()
			}
			c.refuse(why)
			return
		}
		c.broadcast(welcome, -1)
	}
	for {
		m, err := readFrame(conn, time.Now().Add(c.opt.HeartbeatTimeout))
		if err != nil {
			c.mu.Lock()
			done := c.bye[rank]
			c.mu.Unlock()
			if !done {
				c.fail(rank, describeConnErr(err, c.opt.HeartbeatTimeout))
			}
			return
		}
		switch m.Type {
		case msgHeartbeat:
		case msgGather:
			if err := c.gather(rank, m); err != nil {
				c.fail(rank, err.Error())
				return
			}
		case msgBye:
			c.mu.Lock()
			c.bye[rank] = true
			c.byes++
			all := c.byes == c.size
			c.mu.Unlock()
			if all {
				close(c.finished)
			}
			return
		default:
			c.fail(rank, fmt.Sprintf("sent unexpected %q message", m.Type))
			return
		}
	}
}

func describeConnErr(err error, hb time.Duration) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Sprintf("no heartbeat for %v (stalled)", hb)
	}
	if strings.Contains(err.Error(), "malformed") || errors.Is(err, errFrameTooLarge) {
		return err.Error()
	}
	return "connection lost (process died?): " + err.Error()
}

func (c *Coordinator) gather(rank int, m *message) error {
	c.mu.Lock()
	if !c.welcomed {
		c.mu.Unlock()
		return errors.New("gather before every rank joined")
	}
	g := c.gathers[m.Seq]
	if g == nil {
		g = &gatherState{data: make([][]byte, c.size)}
		c.gathers[m.Seq] = g
	}
	if g.data[rank] != nil {
		c.mu.Unlock()
		return fmt.Errorf("gather %d sent twice", m.Seq)
	}
	if len(c.gathers) > 64 {
		c.mu.Unlock()
		return errors.New("more than 64 gathers in flight: ranks are out of step")
	}
	d := m.Data
	if d == nil {
		d = []byte{}
	}
	g.data[rank] = d
	g.n++
	g.size += len(d)
	if g.size > MaxFrameBytes/2 {
		c.mu.Unlock()
		return fmt.Errorf("gather %d exceeds %d bytes in total", m.Seq, MaxFrameBytes/2)
	}
	complete := g.n == c.size
	if complete {
		delete(c.gathers, m.Seq)
	}
	c.mu.Unlock()
	if complete {
		c.broadcast(&message{Type: msgGathered, Rank: -1, Seq: m.Seq, All: g.data}, -1)
	}
	return nil
}

// broadcast sends m to every connected rank except skip, in parallel so a
// stalled rank delays nobody; write errors surface through that rank's
// reader.
func (c *Coordinator) broadcast(m *message, skip int) {
	c.mu.Lock()
	targets := make([]*rankConn, 0, c.size)
	for r, rc := range c.conns {
		if rc != nil && r != skip && !c.bye[r] {
			targets = append(targets, rc)
		}
	}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, rc := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = rc.send(m, c.opt.WriteTimeout)
		}()
	}
	wg.Wait()
}

// heartbeat sends a heartbeat to every welcomed rank that is not still
// busy with an earlier frame.
func (c *Coordinator) heartbeat() {
	c.mu.Lock()
	targets := make([]*rankConn, 0, c.size)
	for r, rc := range c.conns {
		if rc != nil && !c.bye[r] {
			targets = append(targets, rc)
		}
	}
	c.mu.Unlock()
	m := &message{Type: msgHeartbeat, Rank: -1}
	for _, rc := range targets {
		if rc.beating.CompareAndSwap(false, true) {
			go func() {
				defer rc.beating.Store(false)
				_ = rc.send(m, c.opt.WriteTimeout)
			}()
		}
	}
}

// fail records the first failure and tells every other rank.
func (c *Coordinator) fail(rank int, reason string) {
	c.end(&RankFailedError{Rank: rank, Reason: reason}, &message{Type: msgFail, Rank: rank, Err: reason}, rank)
}

// refuse ends the job for a reason that is no rank's failure, telling
// every rank with an error frame.
func (c *Coordinator) refuse(reason string) {
	c.end(errors.New("coordinator: "+reason), &message{Type: msgError, Rank: -1, Err: reason}, -1)
}

// end records the first failure, err, and sends m to every rank but skip.
func (c *Coordinator) end(err error, m *message, skip int) {
	c.mu.Lock()
	if c.failErr != nil {
		c.mu.Unlock()
		return
	}
	c.failErr = err
	c.mu.Unlock()
	// Failed closes before the broadcast so that a launcher watching both
	// sees the root cause before any victim exits.
	close(c.failed)
	c.broadcast(m, skip)
	close(c.failSent)
}

func (c *Coordinator) shutdown() {
	c.ln.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rc := range c.conns {
		if rc != nil {
			rc.conn.Close()
		}
	}
}
