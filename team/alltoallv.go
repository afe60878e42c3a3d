package team

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// Alltoallv (and alltoall, the same with one count for every peer) in the
// team layer.
//
// A rank's arguments give row r of the count matrix (what it sends) and
// column r (what it receives), never the other ranks' counts. Pairwise
// exchange reads nothing else (sched/alg_alltoallv_pairwise.go: rank r's
// steps use Counts[r][*] and Counts[*][r] only), so for pairwise the team
// plans from a matrix holding just that row and column: no communication
// before the data moves, which is why it is the default. NIMBLE plans the
// whole matrix (every rank must compute the same split and relays) and
// any other algorithm may, so for those the call first exchanges every
// rank's row and column (an allgather of 2*size counts over the team's
// own transport, as a call of its own) and plans when it completes. Every
// rank then holds the same matrix and the same column sums to check, so
// counts that do not pair up (rank i sends j x bytes, j expects y) fail the
// call on every rank alike instead of leaving some of them waiting. A
// NIMBLE plan the topology cannot serve falls back to pairwise, again on
// every rank alike. Plans are cached per counts and displacements; the
// exchange is paid on every call (a call cannot know the others' counts
// are unchanged), once per persistent request. Alltoall needs no exchange:
// its one count is every rank's.
//
// The caller's displacements are mapped onto the program by
// sched.AlltoallvAt (no staging); packed ones use the program as planned.

// A2AArgs are alltoallv's arrays of goring_coll_args_t, copied out of C
// memory: elements per peer, displacements in elements (nil: packed).
type A2AArgs struct {
	SendCounts, RecvCounts []uint64
	SendDispls, RecvDispls []uint64
	// Uniform: alltoall, every rank sends every peer the same count, so
	// every rank knows the whole matrix and no algorithm needs the
	// exchange.
	Uniform bool
}

// UniformA2A is alltoall as alltoallv: count elements to and from every
// peer, packed.
func UniformA2A(count uint64, n int) *A2AArgs {
	c := make([]uint64, n)
	for i := range c {
		c[i] = count
	}
	return &A2AArgs{SendCounts: c, RecvCounts: c, Uniform: true}
}

// a2aRowColAlgs are the alltoallv algorithms that need only this rank's
// row and column of the count matrix.
var a2aRowColAlgs = map[string]bool{"pairwise": true}

// a2aLayout is one rank's side of an alltoallv call in bytes.
type a2aLayout struct {
	send, recv     []int64 // bytes to and from each peer
	sendAt, recvAt []int64 // byte offsets of those blocks in src and dst
	packed         bool    // sendAt and recvAt are the prefix sums
	srcLen, dstLen int64   // extents of the caller's buffers
}

// a2aLayoutOf checks and converts the arguments of an alltoallv of n ranks
// at rank r with esize-byte elements. Every product and sum is bounded
// first: a count times the team size and a displacement each stay below
// 2^61 bytes, so a block's end and a row's sum fit an int64.
func a2aLayoutOf(v *A2AArgs, n, r int, esize int64) (*a2aLayout, error) {
	if len(v.SendCounts) != n || len(v.RecvCounts) != n ||
		(v.SendDispls != nil && len(v.SendDispls) != n) || (v.RecvDispls != nil && len(v.RecvDispls) != n) {
		return nil, Invalid("alltoallv: counts and displacements must have one entry per rank (%d)", n)
	}
	maxCount := uint64(1<<61) / uint64(esize) / uint64(n)
	maxDispl := uint64(1<<61) / uint64(esize)
	side := func(what string, counts, displs []uint64) (b, at []int64, extent int64, packed bool, err error) {
		b, at, packed = make([]int64, n), make([]int64, n), true
		var sum int64
		for j, c := range counts {
			if c > maxCount {
				return nil, nil, 0, false, Invalid("alltoallv: %s count %d for rank %d of %d-byte elements overflows", what, c, j, esize)
			}
			b[j] = int64(c) * esize
			at[j] = sum
			if displs != nil && c > 0 {
				if displs[j] > maxDispl {
					return nil, nil, 0, false, Invalid("alltoallv: %s displacement %d for rank %d of %d-byte elements overflows", what, displs[j], j, esize)
				}
				at[j] = int64(displs[j]) * esize
				packed = packed && at[j] == sum
			}
			sum += b[j]
			if b[j] > 0 {
				extent = max(extent, at[j]+b[j])
			}
		}
		return b, at, extent, packed, nil
	}
	l := &a2aLayout{}
	var sp, rp bool
	var err error
	if l.send, l.sendAt, l.srcLen, sp, err = side("send", v.SendCounts, v.SendDispls); err != nil {
		return nil, err
	}
	if l.recv, l.recvAt, l.dstLen, rp, err = side("receive", v.RecvCounts, v.RecvDispls); err != nil {
		return nil, err
	}
	l.packed = sp && rp
	if l.send[r] != l.recv[r] {
		return nil, Invalid("alltoallv: rank %d sends itself %d bytes but receives %d from itself", r, l.send[r], l.recv[r])
	}
	return l, nil
}

// key is what the layout adds to a plan's cache key: the non-empty blocks
// (peer, bytes, and offsets unless packed) on both sides.
func (l *a2aLayout) key() string {
	var b strings.Builder
	put := func(x int64) { _ = binary.Write(&b, binary.LittleEndian, x) }
	put(int64(len(l.send)))
	if l.packed {
		put(1)
	} else {
		put(0)
	}
	for _, s := range []struct{ n, at []int64 }{{l.send, l.sendAt}, {l.recv, l.recvAt}} {
		for j, c := range s.n {
			if c == 0 {
				continue
			}
			put(int64(j))
			put(c)
			if !l.packed {
				put(s.at[j])
			}
		}
		put(-1)
	}
	return b.String()
}

// rowCol is the count matrix an algorithm of a2aRowColAlgs needs from rank
// r: its row and its column, zeros elsewhere.
func (l *a2aLayout) rowCol(r int) [][]int64 {
	n := len(l.send)
	m := make([][]int64, n)
	for i := range m {
		m[i] = make([]int64, n)
		m[i][r] = l.recv[i]
	}
	copy(m[r], l.send)
	return m
}

// a2aExchange is the count exchange that runs before an alltoallv whose
// algorithm needs the whole matrix: an allgather of each rank's row and
// column (2n int64 bytes counts), then planning in planExchanged. MoE
// calls run one too, of their routing's hash (moe.go).
type a2aExchange struct {
	m    *exec.Machine
	mine []byte // this rank's row, then column (ucx.Alloc'd, in c.owned)
	all  []byte // every rank's, in rank order
	// then builds the call's executor once the exchange has completed.
	then   func() (*exec.Machine, error)
	a      Args
	l      *a2aLayout
	mem    exec.Mem
	bufs   exec.Buffers
	active bool // the exchange is the call on the wire
	// refused: this rank refused its own arguments, and its exchange
	// says so to every rank (alltoallv_refuse.go); nil: it did not.
	refused error
}

// newAlltoallvRunner prepares an alltoallv call (alg resolved, mem
// classified) on one Machine: the plan and executor now for pairwise, the
// exchange for the rest.
func newAlltoallvRunner(k *Call) (Runner, error) {
	c, a, mem := k.coll, k.Args, k.mem
	t := c.team
	if a.InPlace {
		return nil, NotSupported("in-place alltoallv")
	}
	if a.A2A == nil {
		return nil, Invalid("alltoallv: no counts")
	}
	if !mem.IsHost() {
		// The programs run on device memory in goring bench, but no test
		// has run this path on a GPU yet: UCC's next layer takes it.
		return nil, NotSupported("alltoallv on device memory (not yet tested through the team layer)")
	}
	// Alltoallv has no lane split (coll.CheckLanes): it runs on lane 0.
	exchanges := !a2aRowColAlgs[c.alg] && !a.A2A.Uniform
	l, bufs, err := c.a2aCheck(a, mem, exchanges)
	if err != nil {
		if exchanges && StatusOf(err) == StatusInvalid {
			// Refused by this rank's own arguments, which its peers cannot
			// see: the exchange carries the refusal (alltoallv_refuse.go).
			return c.refusingExchange(err)
		}
		return nil, err
	}
	r := &machineRunner{c: c}
	switch {
	case a2aRowColAlgs[c.alg]:
		r.m, err = c.planAlltoallv(a, mem, l, l.rowCol(t.rank), bufs)
	case a.A2A.Uniform:
		r.m, err = c.planAlltoallv(a, mem, l, sched.UniformCounts(t.size, l.send[0]), bufs)
	default:
		r.xchg, err = c.prepareExchange(a, mem, l, bufs)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// a2aBuffers are the caller's src and dst as regions of the layout's
// extents (a side that moves nothing may be NULL).
func (c *Coll) a2aBuffers(a Args, mem exec.Mem, l *a2aLayout) (exec.Buffers, error) {
	if (a.Src == nil && l.srcLen > 0) || (a.Dst == nil && l.dstLen > 0) {
		return exec.Buffers{}, Invalid("alltoallv: missing buffer")
	}
	return exec.Buffers{Src: c.view(mem, a.Src, l.srcLen), Dst: c.view(mem, a.Dst, l.dstLen)}, nil
}

// planAlltoallv builds the plan for matrix (cached by the layout: for a
// row-and-column algorithm the layout is the matrix's only non-zero part;
// otherwise the key adds the whole matrix) and c's executor over bufs.
func (c *Coll) planAlltoallv(a Args, mem exec.Mem, l *a2aLayout, matrix [][]int64, bufs exec.Buffers) (*exec.Machine, error) {
	t := c.team
	esize := a.Dtype.Size()
	key := l.key()
	if !a2aRowColAlgs[c.alg] {
		key += matrixKey(matrix)
	}
	spec := sched.Spec{Collective: coll.Alltoallv, Algorithm: c.alg, Topo: t.topo, DtypeBytes: esize, Counts: matrix, Chunks: a.Chunks}
	k := planKey{coll: string(coll.Alltoallv), alg: c.alg, elem: esize, rank: t.rank, dtype: a.Dtype, mem: mem, chunks: a.Chunks, layout: key}
	entry, err := t.plans.getKeyed(k, func() (*planEntry, error) {
		p, err := t.plans.generate(spec, t.rank)
		if err != nil {
			return nil, err
		}
		e := &planEntry{plan: p}
		if !l.packed {
			if e.prog, err = sched.AlltoallvAt(&p.Ranks[t.rank], matrix, t.rank, l.sendAt, l.recvAt); err != nil {
				return nil, invalidErr{err}
			}
		}
		return e, nil
	})
	switch {
	case err == nil:
	case sched.IsUnsupported(err):
		return nil, notSupportedErr{err}
	case StatusOf(err) == StatusInvalid:
		return nil, err
	default:
		return nil, invalidErr{err}
	}
	c.alg, c.entry = entry.plan.Algorithm, entry
	return c.build(entry, entry.program(t.rank), bufs, a)
}

// matrixKey encodes a whole count matrix for a plan's cache key.
func matrixKey(m [][]int64) string {
	var b strings.Builder
	for _, row := range m {
		for _, x := range row {
			_ = binary.Write(&b, binary.LittleEndian, x)
		}
	}
	return b.String()
}

// prepareExchange sets up the count exchange of c (a host allgather of
// 2n int64 counts per rank, planned as any allgather of the team).
func (c *Coll) prepareExchange(a Args, mem exec.Mem, l *a2aLayout, bufs exec.Buffers) (*a2aExchange, error) {
	t := c.team
	n := t.size
	per := int64(2 * n * 8)
	x := &a2aExchange{a: a, l: l, mem: mem, bufs: bufs, mine: c.alloc(per), all: c.alloc(per * int64(n))}
	x.then = func() (*exec.Machine, error) { return c.planExchanged(x) }
	for j := range n {
		binary.LittleEndian.PutUint64(x.mine[8*j:], uint64(l.send[j]))
		binary.LittleEndian.PutUint64(x.mine[8*(n+j):], uint64(l.recv[j]))
	}
	return x, c.exchangeMachine(x, per)
}

// exchangeMachine builds x's allgather of per bytes a rank (x.mine into
// x.all), a host ring planned as any allgather of the team.
func (c *Coll) exchangeMachine(x *a2aExchange, per int64) error {
	t := c.team
	spec := sched.Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: t.topo, Bytes: per, DtypeBytes: 8}
	entry, err := t.plans.get(spec, t.rank, coll.Uint64, coll.OpInvalid, exec.Host)
	if err != nil {
		return invalidErr{err}
	}
	prog := entry.program(t.rank)
	xb := exec.Buffers{Src: exec.HostRegion(x.mine), Dst: exec.HostRegion(x.all)}
	if z := prog.Sizes.Scratch; z > 0 {
		xb.Scratch = exec.HostRegion(c.alloc(z))
	}
	if x.m, err = exec.New(prog, xb, exec.ConfigFor(entry.plan, coll.DtypeInvalid, coll.OpInvalid)); err != nil {
		return invalidErr{err}
	}
	return nil
}

// planExchanged plans the alltoallv from the exchanged counts once the
// exchange has completed. Every rank sees the same matrix, so every rank
// reaches the same verdict.
func (c *Coll) planExchanged(x *a2aExchange) (*exec.Machine, error) {
	n := c.team.size
	if err := x.refusal(n); err != nil {
		return nil, err
	}
	matrix := make([][]int64, n)
	col := func(i, j int) int64 { // what rank j expects from rank i
		return int64(binary.LittleEndian.Uint64(x.all[(j*2*n+n+i)*8:]))
	}
	for i := range n {
		matrix[i] = make([]int64, n)
		for j := range n {
			matrix[i][j] = int64(binary.LittleEndian.Uint64(x.all[(i*2*n+j)*8:]))
		}
	}
	for i := range n {
		for j := range n {
			if matrix[i][j] != col(i, j) {
				return nil, Invalid("alltoallv: rank %d sends rank %d %d bytes, which expects %d", i, j, matrix[i][j], col(i, j))
			}
		}
	}
	m, err := c.planAlltoallv(x.a, x.mem, x.l, matrix, x.bufs)
	if StatusOf(err) == StatusNotSupported && c.alg != "pairwise" {
		// Too late to hand the call to UCC: run pairwise, as every rank does.
		was := c.alg
		c.alg = "pairwise"
		if m, err = c.planAlltoallv(x.a, x.mem, x.l, matrix, x.bufs); err == nil {
			return m, nil
		}
		return nil, fmt.Errorf("alltoallv: %s unsupported and pairwise failed: %w", was, err)
	}
	return m, err
}
