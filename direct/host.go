package direct

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
)

// HostServes reports whether c has an algorithm on the host backend.
func HostServes(c coll.Collective) bool { return c == coll.Allreduce || c == coll.Allgather }

// Operand is bytes of a process's memory at Addr: a peer's, or this
// process's where Pid is 0.
type Operand struct {
	Pid  int64
	Addr uint64
}

// Job is one part of a phase: len(Dst) bytes of Srcs[0] copied into Dst
// (one operand), or the reduction of Srcs in their order (several), then
// written to each of Outs (peers' memory). Dst is this process's memory;
// only Srcs[0] may be Dst itself.
type Job struct {
	Dst  []byte
	Srcs []Operand
	Outs []Operand
}

// Reader reads other processes' memory for the host backend: package
// crossread's CrossReader
// (process_vm_readv, on worker threads that stay awake between phases),
// and the tests' in-process copies.
type Reader interface {
	// Pid is this process's id, as peers name it to Read.
	Pid() int64
	// Read copies len(dst) bytes at addr of process pid into dst.
	Read(dst []byte, pid int64, addr uint64) error
	// Run does every job, several at once on up to threads threads, and
	// returns the first error. A reduction combines its operands
	// element-wise for (d, o) in pieces small enough to stay in cache.
	Run(jobs []Job, threads int, d coll.Dtype, o coll.Op) error
}

// MinPart is the fewest bytes a job is given: below it a part costs more
// to hand over than to copy.
const MinPart = 64 << 10

// MaxThreads bounds a Host's threads.
const MaxThreads = 16

// Host is the host backend: every rank reads its part of the peers'
// buffers through a Reader. It is what one rank's calls of a team share:
// the reader, the threads its phases run on, the cookie peers read to
// verify that they can, and whether they could.
type Host struct {
	reader   Reader
	threads  int
	cookie   *uint64 // on the heap, never moved: peers read it
	jobs     []Job
	ops      []Operand
	verified bool
	stats    Stats
}

// Stats is what the team's calls have spent so far.
func (t *Host) Stats() Stats { return t.stats }

// NewHost is a rank's state for its team's calls: reads through r on
// threads threads (1..MaxThreads), cookie a random number other than 0.
func NewHost(r Reader, threads int, cookie uint64) *Host {
	threads = max(1, min(threads, MaxThreads))
	if cookie == 0 {
		cookie = 0x676f72696e67 // "goring": never 0, which an unmapped read could give
	}
	c := new(uint64)
	*c = cookie
	return &Host{reader: r, threads: threads, cookie: c}
}

// Verified reports whether a call of this team has found that its ranks
// can read each other's memory.
func (t *Host) Verified() bool { return t.verified }

func (t *Host) cookieAddr() uint64 { return uint64(uintptr(unsafe.Pointer(t.cookie))) }

// reset empties the job list for the next phase.
func (t *Host) reset() { t.jobs, t.ops = t.jobs[:0], t.ops[:0] }

// add appends a job of dst from srcs, written out to outs (copies in the
// team's growing operand list: the jobs keep slices of it, so a full list
// starts anew).
func (t *Host) add(dst []byte, srcs, outs []Operand) {
	if n := len(srcs) + len(outs); len(t.ops)+n > cap(t.ops) {
		t.ops = make([]Operand, 0, max(2*cap(t.ops), n, 64))
	}
	at := len(t.ops)
	t.ops = append(t.ops, srcs...)
	mid := len(t.ops)
	t.ops = append(t.ops, outs...)
	j := Job{Dst: dst, Srcs: t.ops[at:mid:mid]}
	if len(outs) > 0 {
		j.Outs = t.ops[mid:len(t.ops):len(t.ops)]
	}
	t.jobs = append(t.jobs, j)
}

// run does the phase's jobs.
func (t *Host) run(d coll.Dtype, o coll.Op) error {
	return t.reader.Run(t.jobs, t.threads, d, o)
}

// parts splits n bytes of esize-byte elements into at most threads
// ranges of at least MinPart bytes (but one), element-aligned; it returns
// the ranges' ends (the first starts at 0).
func parts(n int64, esize, threads int) []int64 {
	k := int64(max(1, min(threads, int(n/MinPart))))
	elems := n / int64(esize)
	ends := make([]int64, 0, k)
	for i := int64(1); i <= k; i++ {
		ends = append(ends, elems*i/k*int64(esize))
	}
	return ends
}

// hostCall is a call's state on the host backend: where every rank's
// buffers are.
type hostCall struct {
	peers []arrive
}

func (h hostCall) reuse() hostCall { return hostCall{peers: h.peers[:0]} }

// arrive is a rank's buffers as its peers read them.
type arrive struct {
	pid        int64
	cookieAddr uint64
	cookie     uint64
	src, dst   uint64 // addresses
}

// The host body of ARRIVE:
//
//	[0:8]   the process's id (Reader.Pid)
//	[8:16]  the address of the team's cookie (8 bytes)
//	[16:24] the cookie's value, for the verdict
//	[24:32] source address   [32:40] result address
func putHostArrive(b []byte, a arrive) {
	le.PutUint64(b[0:], uint64(a.pid))
	le.PutUint64(b[8:], a.cookieAddr)
	le.PutUint64(b[16:], a.cookie)
	le.PutUint64(b[24:], a.src)
	le.PutUint64(b[32:], a.dst)
}

func readHostArrive(b []byte) arrive {
	return arrive{pid: int64(le.Uint64(b[0:])), cookieAddr: le.Uint64(b[8:]), cookie: le.Uint64(b[16:]),
		src: le.Uint64(b[24:]), dst: le.Uint64(b[32:])}
}

func (*Host) check(cfg Config) error {
	switch {
	case !HostServes(cfg.Collective):
		return fmt.Errorf("no host algorithm for %s", cfg.Collective)
	case !cfg.Src.IsHost() || !cfg.Dst.IsHost():
		return fmt.Errorf("%v and %v: host memory only", cfg.Src, cfg.Dst)
	case cfg.Dtype.Size() == 0 || cfg.Dst.Len()%int64(cfg.Dtype.Size()) != 0:
		return fmt.Errorf("%d bytes of %v", cfg.Dst.Len(), cfg.Dtype)
	case cfg.Collective == coll.Allreduce && cfg.Src.Len() != cfg.Dst.Len(),
		cfg.Collective == coll.Allgather && cfg.Dst.Len() != int64(cfg.Size)*cfg.Src.Len():
		// The work takes its offsets from one buffer into the other, and
		// into the peers', whose lengths agree with this rank's: a source
		// shorter than an allreduce's result would be read past its end
		// here and in every peer, and a result shorter than an
		// allgather's blocks cut past its end (a panic mid-call).
		return fmt.Errorf("%s of %d ranks with %d source and %d result bytes", cfg.Collective, cfg.Size, cfg.Src.Len(), cfg.Dst.Len())
	}
	return nil
}

func (*Host) everyone() bool  { return true }
func (*Host) fallback() error { return ErrUnreadable }

// verdict: the team's first call finds out whether its ranks can read
// each other; the team remembers the outcome (Verified).
func (t *Host) verdict() bool  { return !t.verified }
func (t *Host) passed()        { t.verified = true }
func (t *Host) timing() *Stats { return &t.stats }

func (t *Host) arrive(c *Call, b []byte) error {
	src, dst := uint64(c.cfg.Src.Addr()), uint64(c.cfg.Dst.Addr())
	putHostArrive(b, arrive{pid: t.reader.Pid(), cookieAddr: t.cookieAddr(), cookie: *t.cookie, src: src, dst: dst})
	c.host.peers = append(c.host.peers[:0], make([]arrive, c.cfg.Size)...)
	c.host.peers[c.cfg.Rank] = arrive{src: src, dst: dst}
	return nil
}

// open decodes where the peers' buffers are; whether they can be read is
// the verdict's question.
func (t *Host) open(c *Call, bodies [][]byte) error {
	for q, b := range bodies {
		if q != c.cfg.Rank {
			c.host.peers[q] = readHostArrive(b)
		}
	}
	return nil
}

// probe reads every peer's cookie: nil if each read gives the number the
// peer sent. Reads and writes need the same permission, so the read
// stands for both.
func (t *Host) probe(c *Call) error {
	var errs []error
	var got [8]byte
	for q := 0; q < c.cfg.Size; q++ {
		if q == c.cfg.Rank {
			continue
		}
		a := c.host.peers[q]
		if err := t.reader.Read(got[:], a.pid, a.cookieAddr); err != nil {
			errs = append(errs, fmt.Errorf("rank %d cannot read rank %d (process %d): %w", c.cfg.Rank, q, a.pid, err))
			continue
		}
		if v := le.Uint64(got[:]); v != a.cookie {
			errs = append(errs, fmt.Errorf("rank %d reads %#x at rank %d's cookie (process %d), not %#x: another process by that id (a pid namespace apart)", c.cfg.Rank, v, q, a.pid, a.cookie))
		}
	}
	return errors.Join(errs...)
}

// work runs this rank's part, all of it inside one Progress on the
// team's threads: an allreduce reduces its block and writes it out, an
// allgather reads everything.
func (t *Host) work(c *Call) (moved, done bool, err error) {
	if c.cfg.Collective == coll.Allgather {
		return true, true, c.gatherAll()
	}
	return true, true, c.reduceBlock()
}

// The reads run inside work: nothing to poll, cancel or release.
func (*Host) poll(*Call, time.Time, *time.Time) (bool, error) { return false, nil }
func (*Host) ownsToken(*Call, uint64) bool                    { return false }
func (*Host) step(*Call, exec.Completion) error               { return nil }
func (*Host) stop(*Call) []error                              { return nil }
