package crossmem

import (
	"sync"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
)

// Operand is n bytes of a process's memory at Addr: a peer's, or this
// process's where Pid is 0.
type Operand struct {
	Pid  int64
	Addr uint64
}

// Reader reads other processes' memory: package cexec's CrossReader
// (process_vm_readv), and the tests' in-process copies.
type Reader interface {
	// Pid is this process's id, as peers name it to Read.
	Pid() int64
	// Read copies len(dst) bytes at addr of process pid into dst.
	Read(dst []byte, pid int64, addr uint64) error
	// Reduce sets dst to srcs[0] OP srcs[1] OP ... (len(dst) bytes each,
	// combined in that order), reading in pieces of len(acc) bytes: acc
	// and in are the reader's scratch, of equal length. dst may be one of
	// the local operands.
	Reduce(dst []byte, srcs []Operand, d coll.Dtype, o coll.Op, acc, in []byte) error
}

// Piece is the bytes a thread reduces at a time: small enough that the
// accumulator and the operand just read stay in a core's cache.
const Piece = 128 << 10

// MinPart is the fewest bytes a thread is given: below it a part costs
// more to hand over than to copy.
const MinPart = 64 << 10

// MaxThreads bounds a Team's threads.
const MaxThreads = 16

// Team is what one rank's calls of a team share: the reader, the threads
// that split each phase, their scratch, the cookie peers read to verify
// that they can, and whether they could.
type Team struct {
	reader   Reader
	threads  int
	cookie   *uint64 // on the heap, never moved: peers read it
	scratch  [][]byte
	ops      [][]Operand
	verified bool
}

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

// Threads is the number of threads a phase runs on.
func (t *Team) Threads() int { return t.threads }

// Verified reports whether a call of this team has found that its ranks
// can read each other's memory.
func (t *Team) Verified() bool { return t.verified }

func (t *Team) cookieAddr() uint64 { return uint64(uintptr(unsafe.Pointer(t.cookie))) }

// run calls f for parts 0..n-1 on up to the team's threads (the caller's
// goroutine is one of them), each with its own scratch, and returns the
// first error. Parts are taken in order by whichever thread is free.
func (t *Team) run(n int, f func(part int, s *scratch) error) error {
	w := min(t.threads, n)
	for len(t.scratch) < w {
		t.scratch = append(t.scratch, make([]byte, 2*Piece))
		t.ops = append(t.ops, nil)
	}
	var (
		mu   sync.Mutex
		next int
		errs error
		wg   sync.WaitGroup
	)
	take := func() int {
		mu.Lock()
		defer mu.Unlock()
		if errs != nil || next == n {
			return -1
		}
		next++
		return next - 1
	}
	work := func(i int) {
		s := &scratch{acc: t.scratch[i][:Piece], in: t.scratch[i][Piece:], ops: t.ops[i][:0]}
		for p := take(); p >= 0; p = take() {
			if err := f(p, s); err != nil {
				mu.Lock()
				if errs == nil {
					errs = err
				}
				mu.Unlock()
			}
		}
		t.ops[i] = s.ops[:0]
	}
	for i := 1; i < w; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(i)
		}()
	}
	work(0)
	wg.Wait()
	return errs
}

// scratch is one thread's: the reader's two pieces and an operand list.
type scratch struct {
	acc, in []byte
	ops     []Operand
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
