package team

import (
	"encoding/binary"
	"fmt"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// An alltoallv's counts and displacements are each rank's own: a rank
// that refuses them at init (counts that overflow, receive blocks that
// overlap, a missing buffer) does so alone, and its peers, which found
// nothing wrong with theirs, post the call and wait for it. Where the
// algorithm exchanges counts anyway (alltoallv.go), the refusing rank
// makes the call all the same and runs the exchange with a refusal in
// place of its counts, so that every rank fails the call once the
// exchange completes, before any data moves, instead of some of them
// waiting for a rank that never comes. The row-and-column algorithms
// (pairwise) exchange nothing, so such a refusal stays the rank's alone.

// a2aRefused fills a refusing rank's row and column in the exchange: no
// count comes near it (a2aLayoutOf bounds them below 2^61 bytes).
const a2aRefused = ^uint64(0)

// a2aCheck checks rank's own alltoallv arguments: its layout, its
// buffers and, where the call exchanges counts (and so plans only after
// the exchange), its receive blocks, which planning would refuse after
// the peers have gone ahead.
func (c *Coll) a2aCheck(a Args, mem exec.Mem, exchanges bool) (*a2aLayout, exec.Buffers, error) {
	t := c.team
	l, err := a2aLayoutOf(a.A2A, t.size, t.rank, int64(a.Dtype.Size()))
	if err != nil {
		return nil, exec.Buffers{}, err
	}
	bufs, err := c.a2aBuffers(a, mem, l)
	if err != nil {
		return nil, exec.Buffers{}, err
	}
	if exchanges {
		if err := sched.AlltoallvRecvDisjoint(l.recv, l.recvAt); err != nil {
			return nil, exec.Buffers{}, invalidErr{err}
		}
	}
	return l, bufs, nil
}

// refusingExchange is the runner of a call this rank refused (why): the
// count exchange alone, its row and column a2aRefused, which fails the
// call on every rank when it completes.
func (c *Coll) refusingExchange(why error) (Runner, error) {
	n := c.team.size
	per := int64(2 * n * 8)
	x := &a2aExchange{mine: c.alloc(per), all: c.alloc(per * int64(n)), refused: why}
	for k := range 2 * n {
		binary.LittleEndian.PutUint64(x.mine[8*k:], a2aRefused)
	}
	x.then = func() (*exec.Machine, error) { return c.planExchanged(x) }
	if err := c.exchangeMachine(x, per); err != nil {
		return nil, err
	}
	return &machineRunner{c: c, xchg: x}, nil
}

// refusal is the error every rank fails an exchanged call with where a
// rank refused its arguments: the rank's own reason on that rank, the
// first refusing rank's number on the others; nil where none refused.
func (x *a2aExchange) refusal(n int) error {
	if x.refused != nil {
		return fmt.Errorf("%w (every rank fails the call; nothing moved)", x.refused)
	}
	for q := range n {
		if binary.LittleEndian.Uint64(x.all[q*2*n*8:]) == a2aRefused {
			return Invalid("alltoallv: rank %d refused its counts or displacements; nothing moved", q)
		}
	}
	return nil
}
