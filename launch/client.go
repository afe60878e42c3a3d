package launch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// JoinConfig describes one rank joining a job.
type JoinConfig struct {
	Addr  string // coordinator host:port
	Token string
	Rank  int
	Size  int
	// Host, Node and Local are this rank's locality; Payload is opaque (the
	// UCX worker address).
	Host    string
	Node    int
	Local   int
	Payload []byte
	Options Options
}

// Client is one rank's connection to the coordinator.
type Client struct {
	conn  net.Conn
	cfg   JoinConfig
	opt   Options
	peers []Peer

	wmu     sync.Mutex
	mu      sync.Mutex
	seq     uint64
	waiters map[uint64]chan [][]byte
	err     error
	failed  chan struct{}
	closed  chan struct{}
	once    sync.Once
}

// Join dials the coordinator (retrying while it is not up yet, until the
// join timeout), presents the token and waits for the table of peers.
func Join(ctx context.Context, cfg JoinConfig) (*Client, error) {
	return join(ctx, cfg, nil)
}

// errRetry marks a failed join attempt that a rank whose address came
// from a rendezvous file may make again at what the file names then.
type errRetry struct{ err error }

func (e *errRetry) Error() string { return e.err.Error() }
func (e *errRetry) Unwrap() error { return e.err }

// join is Join where reread, if not nil, says what the rendezvous file
// names now (ok false: nothing usable). The file may have been left by a
// dead job with the same id, read before this job's rank 0 replaced it:
// so an address that cannot be reached, hangs up before the welcome or
// refuses the token is not final. Each retry reads the file again, and
// an attempt that is waiting for its welcome is given up once the file
// names another address or token, until the join timeout.
func join(ctx context.Context, cfg JoinConfig, reread func() (addr, token string, ok bool)) (*Client, error) {
	opt := cfg.Options.withDefaults()
	deadline := time.Now().Add(opt.JoinTimeout)
	for {
		c, err := joinOnce(ctx, cfg, opt, deadline, reread)
		var retry *errRetry
		if err == nil || !errors.As(err, &retry) {
			return c, err
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return nil, retry.err
		}
		select {
		case <-ctx.Done():
			return nil, retry.err
		case <-time.After(50 * time.Millisecond):
		}
		if reread != nil {
			if addr, token, ok := reread(); ok {
				cfg.Addr, cfg.Token = addr, token
			}
		}
	}
}

// joinOnce is one attempt of join at cfg.Addr. A connection refused is
// always worth another attempt (the coordinator may not be up yet); where
// the address came from a file, so are a hang-up before the welcome and
// a refused token.
func joinOnce(ctx context.Context, cfg JoinConfig, opt Options, deadline time.Time, reread func() (string, string, bool)) (*Client, error) {
	d := net.Dialer{Deadline: deadline}
	conn, err := d.DialContext(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, &errRetry{fmt.Errorf("rank %d: cannot reach the coordinator at %s: %w", cfg.Rank, cfg.Addr, err)}
	}
	fromFile := func(err error) error {
		if reread != nil {
			return &errRetry{err}
		}
		return err
	}
	c := &Client{conn: conn, cfg: cfg, opt: opt,
		waiters: map[uint64]chan [][]byte{}, failed: make(chan struct{}), closed: make(chan struct{})}
	hello := &message{Type: msgHello, Version: ProtocolVersion, Token: cfg.Token, Rank: cfg.Rank, Size: cfg.Size,
		Peer: &Peer{Rank: cfg.Rank, Host: cfg.Host, Node: cfg.Node, Local: cfg.Local, Payload: cfg.Payload}}
	if err := c.send(hello); err != nil {
		conn.Close()
		return nil, fromFile(fmt.Errorf("rank %d: sending hello: %w", cfg.Rank, err))
	}
	// The coordinator reads every admitted rank with the heartbeat
	// timeout, so this rank beats while it waits for the others: the last
	// may join long after it (within the join timeout), and a silent wait
	// would have it declared stalled.
	go c.heartbeatLoop()
	stopWatch := func() bool { return false }
	if reread != nil {
		stopWatch = c.watchRendezvous(reread)
	}
	// The welcome comes when the last rank joins: this read waits up to the
	// join timeout. The coordinator sends no heartbeat before the welcome.
	m, err := readFrame(conn, deadline)
	for err == nil && m.Type == msgHeartbeat { // tolerated before the welcome
		m, err = readFrame(conn, deadline)
	}
	if stopWatch() && err == nil {
		err = errors.New("the rendezvous file named another coordinator meanwhile")
	}
	if err != nil {
		c.abandon()
		return nil, fromFile(fmt.Errorf("rank %d: waiting for the other ranks: %w", cfg.Rank, err))
	}
	switch m.Type {
	case msgWelcome:
	case msgError:
		c.abandon()
		err := fmt.Errorf("rank %d: coordinator refused: %s", cfg.Rank, m.Err)
		if m.Err == errBadToken {
			return nil, fromFile(err)
		}
		return nil, err
	case msgFail:
		c.abandon()
		return nil, &RankFailedError{Rank: m.Rank, Reason: m.Err}
	default:
		c.abandon()
		return nil, fmt.Errorf("rank %d: expected welcome, got %q", cfg.Rank, m.Type)
	}
	if len(m.Peers) != cfg.Size {
		c.abandon()
		return nil, fmt.Errorf("rank %d: welcome lists %d ranks, want %d", cfg.Rank, len(m.Peers), cfg.Size)
	}
	for i, p := range m.Peers {
		if p.Rank != i {
			c.abandon()
			return nil, fmt.Errorf("rank %d: malformed welcome: entry %d is rank %d", cfg.Rank, i, p.Rank)
		}
	}
	c.peers = m.Peers
	go c.readLoop()
	return c, nil
}

// watchRendezvous hangs up a join that waits for its welcome once the
// rendezvous file names another address or token: this attempt went to
// a stale one (something there took the hello and kept quiet), and the
// read of the welcome then fails and join tries the new one. The function
// it returns stops the watch and reports whether it hung up.
func (c *Client) watchRendezvous(reread func() (string, string, bool)) (stop func() bool) {
	done, exited := make(chan struct{}), make(chan struct{})
	hungUp := false
	go func() {
		defer close(exited)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if addr, token, ok := reread(); ok && (addr != c.cfg.Addr || token != c.cfg.Token) {
					hungUp = true
					c.conn.Close()
					return
				}
			}
		}
	}()
	return func() bool {
		close(done)
		<-exited
		return hungUp
	}
}

// abandon stops a join that failed: the heartbeats end and the connection
// closes.
func (c *Client) abandon() {
	c.once.Do(func() {
		close(c.closed)
		c.conn.Close()
	})
}

// Peers is the table of every rank, indexed by rank.
func (c *Client) Peers() []Peer { return c.peers }

// Rank is this client's rank.
func (c *Client) Rank() int { return c.cfg.Rank }

// Size is the number of ranks.
func (c *Client) Size() int { return c.cfg.Size }

// Failed is closed when the job has failed (another rank died or stalled,
// or the coordinator was lost); Err names the cause.
func (c *Client) Failed() <-chan struct{} { return c.failed }

// Err is the failure that closed Failed, or nil.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *Client) setFailed(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	c.mu.Unlock()
	close(c.failed)
}

func (c *Client) send(m *message) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return writeFrame(c.conn, m, time.Now().Add(c.opt.WriteTimeout))
}

func (c *Client) readLoop() {
	for {
		m, err := readFrame(c.conn, time.Now().Add(c.opt.HeartbeatTimeout))
		if err != nil {
			select {
			case <-c.closed:
				return
			default:
			}
			reason := "connection lost: " + err.Error()
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				reason = fmt.Sprintf("no heartbeat for %v", c.opt.HeartbeatTimeout)
			}
			c.setFailed(&RankFailedError{Rank: -1, Reason: reason})
			return
		}
		switch m.Type {
		case msgHeartbeat:
		case msgGathered:
			c.mu.Lock()
			w := c.waiters[m.Seq]
			delete(c.waiters, m.Seq)
			c.mu.Unlock()
			if w == nil || len(m.All) != c.cfg.Size {
				c.setFailed(&RankFailedError{Rank: -1, Reason: fmt.Sprintf("unexpected result of gather %d", m.Seq)})
				return
			}
			w <- m.All
		case msgFail:
			c.setFailed(&RankFailedError{Rank: m.Rank, Reason: m.Err})
			return
		case msgError:
			c.setFailed(&RankFailedError{Rank: -1, Reason: "coordinator error: " + m.Err})
			return
		default:
			c.setFailed(&RankFailedError{Rank: -1, Reason: fmt.Sprintf("unexpected %q message", m.Type)})
			return
		}
	}
}

func (c *Client) heartbeatLoop() {
	t := time.NewTicker(c.opt.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-c.closed:
			return
		case <-c.failed:
			return
		case <-t.C:
			if err := c.send(&message{Type: msgHeartbeat, Rank: c.cfg.Rank}); err != nil {
				c.setFailed(&RankFailedError{Rank: -1, Reason: "sending heartbeat: " + err.Error()})
				return
			}
		}
	}
}

// Allgather sends data (at most MaxFrameBytes/(2*size) bytes is safe) and
// returns every rank's contribution, indexed by rank. It returns early with
// the job's failure, or ctx's error.
func (c *Client) Allgather(ctx context.Context, data []byte) ([][]byte, error) {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.seq++
	seq := c.seq
	w := make(chan [][]byte, 1)
	c.waiters[seq] = w
	c.mu.Unlock()
	if data == nil {
		data = []byte{}
	}
	if err := c.send(&message{Type: msgGather, Rank: c.cfg.Rank, Seq: seq, Data: data}); err != nil {
		c.setFailed(&RankFailedError{Rank: -1, Reason: "sending gather: " + err.Error()})
		return nil, c.Err()
	}
	select {
	case all := <-w:
		return all, nil
	case <-c.failed:
		return nil, c.Err()
	case <-ctx.Done():
		return nil, fmt.Errorf("rank %d: allgather %d: %w", c.cfg.Rank, seq, ctx.Err())
	}
}

// Barrier returns once every rank has entered it.
func (c *Client) Barrier(ctx context.Context) error {
	_, err := c.Allgather(ctx, nil)
	return err
}

// Close says bye (a clean exit, not a failure) and closes the connection.
func (c *Client) Close() error {
	var err error
	c.once.Do(func() {
		if c.Err() == nil {
			err = c.send(&message{Type: msgBye, Rank: c.cfg.Rank})
		}
		close(c.closed)
		c.conn.Close()
	})
	return err
}
