package crossmem

import (
	"time"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
)

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

// Reader reads other processes' memory: package crossread's CrossReader
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

// MaxThreads bounds a Team's threads.
const MaxThreads = 16

// Team is what one rank's calls of a team share: the reader, the threads
// its phases run on, the cookie peers read to verify that they can, and
// whether they could.
type Team struct {
	reader   Reader
	threads  int
	cookie   *uint64 // on the heap, never moved: peers read it
	jobs     []Job
	ops      []Operand
	verified bool
	stats    Stats
}

// Stats is where a rank's calls of a team spent their time, summed over
// the calls that completed: waiting for every ARRIVE, the verdict round,
// reducing its block and writing it out (an allreduce) or reading the
// blocks (an allgather), and waiting for every DONE.
type Stats struct {
	Calls                       int
	Arrive, Verdict, Work, Done time.Duration
}

// Stats is what the team's calls have spent so far.
func (t *Team) Stats() Stats { return t.stats }

// NewTeam is a rank's state for its team's calls: reads through r on
// threads threads (1..MaxThreads), cookie a random number other than 0.
func NewTeam(r Reader, threads int, cookie uint64) *Team {
	threads = max(1, min(threads, MaxThreads))
	if cookie == 0 {
		cookie = 0x676f72696e67 // "goring": never 0, which an unmapped read could give
	}
	c := new(uint64)
	*c = cookie
	return &Team{reader: r, threads: threads, cookie: c}
}

// Verified reports whether a call of this team has found that its ranks
// can read each other's memory.
func (t *Team) Verified() bool { return t.verified }

func (t *Team) cookieAddr() uint64 { return uint64(uintptr(unsafe.Pointer(t.cookie))) }

// reset empties the job list for the next phase.
func (t *Team) reset() { t.jobs, t.ops = t.jobs[:0], t.ops[:0] }

// add appends a job of dst from srcs, written out to outs (copies in the
// team's growing operand list: the jobs keep slices of it, so a full list
// starts anew).
func (t *Team) add(dst []byte, srcs, outs []Operand) {
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
func (t *Team) run(d coll.Dtype, o coll.Op) error {
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
