package sched

import "slices"

// Shared helpers for every generator: how a message splits into blocks of
// whole elements, where a block lies, and how tags are numbered. All
// generators (baselines, parallel rings, lane) use these so that a block
// means the same bytes everywhere and verification messages line up.

// Span is the byte range [Off, Off+Len) of a buffer.
type Span struct {
	Off, Len int64
}

// End is the first byte after the span.
func (s Span) End() int64 { return s.Off + s.Len }

// BlockSpan returns block i of n bytes split into parts blocks of whole
// elements of elem bytes each. Blocks are as even as whole elements allow:
// with E = n/elem elements, the first E%parts blocks hold E/parts+1 elements
// and the rest E/parts, so block sizes differ by at most one element and a
// block may be empty when E < parts. n must be a multiple of elem (Generate
// checks that); the last block absorbs any remainder otherwise.
//
// BlockSpan allocates nothing, so a generator for 4096 ranks can ask for any
// block in O(1).
func BlockSpan(n int64, parts, i, elem int) Span {
	e := int64(elem)
	elems := n / e
	q, r := elems/int64(parts), elems%int64(parts)
	ii := int64(i)
	var first int64 // first element of block i
	var cnt int64
	if ii < r {
		first = ii * (q + 1)
		cnt = q + 1
	} else {
		first = r*(q+1) + (ii-r)*q
		cnt = q
	}
	s := Span{Off: first * e, Len: cnt * e}
	if i == parts-1 {
		s.Len = n - s.Off // a non-multiple tail stays with the last block
	}
	return s
}

// SplitBlocks returns all blocks of BlockSpan(n, parts, i, elem) in order.
func SplitBlocks(n int64, parts, elem int) []Span {
	out := make([]Span, parts)
	for i := range out {
		out[i] = BlockSpan(n, parts, i, elem)
	}
	return out
}

// MaxBlockLen is the length of the largest block of BlockSpan(n, parts, ., elem),
// which is the size of a scratch slot that can hold any block.
func MaxBlockLen(n int64, parts, elem int) int64 {
	return BlockSpan(n, parts, 0, elem).Len
}

// PrefixSums returns the displacements of packed blocks: out[i] is the sum of
// sizes[0:i], and out[len(sizes)] the total.
func PrefixSums(sizes []int64) []int64 {
	out := make([]int64, len(sizes)+1)
	for i, s := range sizes {
		out[i+1] = out[i] + s
	}
	return out
}

// At returns the Ref of offset off+delta in buffer b.
func At(b Buf, off int64) Ref { return Ref{Buf: b, Off: off} }

// NodeOf returns the node and local index of rank r in the plan's
// programs, which Generate fills before the algorithm runs.
func (p *Plan) NodeOf(r int) (node, local int) {
	return p.Ranks[r].Node, p.Ranks[r].Local
}

// SetSizes sets the buffer sizes of every rank of the plan to z.
func (p *Plan) SetSizes(z Sizes) {
	for i := range p.Ranks {
		p.Ranks[i].Sizes = z
	}
}

// ceilLog2 is the number of rounds of a doubling algorithm over n ranks.
func ceilLog2(n int) int {
	k := 0
	for (1 << k) < n {
		k++
	}
	return k
}

func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// Hazards orders the steps of one rank by the bytes they touch, so a
// generator can emit steps in program order and get exactly the deps that
// make it race-free: a step waits for the last writer of every byte it reads
// or writes (read-after-write, write-after-write) and for every reader since
// then of every byte it writes (write-after-read). It is the same
// bookkeeping Verify uses to find races, run forwards. Use one Hazards per
// rank program:
//
//	h := NewHazards(prog.Sizes)
//	id := h.Add(prog, Step{Op: OpRecv, ...}, lockstepDeps...)
//
// Cost: O(log segments + touched segments) per step; deps are deduplicated.
type Hazards struct {
	maps [4]*imap[raceVal]
	pool readerPool
	seen map[int32]bool
}

// NewHazards tracks buffers of sizes z (sizes must be final: set
// prog.Sizes before adding steps).
func NewHazards(z Sizes) *Hazards {
	h := &Hazards{seen: map[int32]bool{}}
	for b := BufSrc; b <= BufScratch; b++ {
		h.maps[b] = newIMap(z.Of(b), raceVal{writer: -1, readers: -1}, raceShift, nil)
	}
	return h
}

// Deps returns the steps s must wait for, plus extra, sorted and unique.
func (h *Hazards) Deps(s Step, extra ...int) []int {
	clear(h.seen)
	var out []int
	add := func(id int32) {
		if id >= 0 && !h.seen[id] {
			h.seen[id] = true
			out = append(out, int(id))
		}
	}
	for _, e := range extra {
		add(int32(e))
	}
	visit := func(b Buf, off, n int64, write bool) {
		if n == 0 {
			return
		}
		m := h.maps[b]
		for i := m.find(off); i < len(m.segs) && m.segs[i].lo < off+n; i++ {
			add(m.segs[i].v.writer)
			if write {
				for x := m.segs[i].v.readers; x >= 0; x = h.pool.next[x] {
					add(h.pool.step[x])
				}
			}
		}
	}
	switch s.Op {
	case OpSend:
		visit(s.SrcBuf, s.SrcOff, s.Len, false)
	case OpRecv:
		visit(s.DstBuf, s.DstOff, s.Len, true)
	case OpCopy, OpReduce:
		visit(s.SrcBuf, s.SrcOff, s.Len, false)
		visit(s.DstBuf, s.DstOff, s.Len, true)
	}
	slices.Sort(out)
	return out
}

// Record notes that step id (already added) accesses what s accesses.
func (h *Hazards) Record(id int, s Step) {
	read := func(b Buf, off, n int64) {
		if n == 0 {
			return
		}
		m := h.maps[b]
		i, j := m.span(off, off+n)
		for k := i; k < j; k++ {
			m.segs[k].v.readers = h.pool.push(m.segs[k].v.readers, int32(id))
		}
	}
	write := func(b Buf, off, n int64) {
		if n == 0 {
			return
		}
		m := h.maps[b]
		i, j := m.span(off, off+n)
		m.segs[i] = seg[raceVal]{m.segs[i].lo, m.segs[j-1].hi, raceVal{writer: int32(id), readers: -1}}
		m.segs = append(m.segs[:i+1], m.segs[j:]...)
	}
	switch s.Op {
	case OpSend:
		read(s.SrcBuf, s.SrcOff, s.Len)
	case OpRecv:
		write(s.DstBuf, s.DstOff, s.Len)
	case OpCopy:
		read(s.SrcBuf, s.SrcOff, s.Len)
		write(s.DstBuf, s.DstOff, s.Len)
	case OpReduce:
		read(s.SrcBuf, s.SrcOff, s.Len)
		write(s.DstBuf, s.DstOff, s.Len)
	}
}

// Add appends s to prog with the deps its bytes need plus extra, records
// it, and returns its id.
func (h *Hazards) Add(prog *RankProgram, s Step, extra ...int) int {
	id := prog.Add(s, h.Deps(s, extra...)...)
	h.Record(id, s)
	return id
}

// Send, Recv, Copy and Reduce are the RankProgram builders with hazard
// deps added.
func (h *Hazards) Send(prog *RankProgram, peer, tag int, src Ref, n int64, path Path, extra ...int) int {
	return h.Add(prog, Step{Op: OpSend, Peer: int32(peer), Tag: int32(tag), SrcBuf: src.Buf, SrcOff: src.Off, Len: n, Path: path}, extra...)
}

// Recv: see Send.
func (h *Hazards) Recv(prog *RankProgram, peer, tag int, dst Ref, n int64, extra ...int) int {
	return h.Add(prog, Step{Op: OpRecv, Peer: int32(peer), Tag: int32(tag), DstBuf: dst.Buf, DstOff: dst.Off, Len: n}, extra...)
}

// Copy: see Send.
func (h *Hazards) Copy(prog *RankProgram, src, dst Ref, n int64, extra ...int) int {
	return h.Add(prog, Step{Op: OpCopy, SrcBuf: src.Buf, SrcOff: src.Off, DstBuf: dst.Buf, DstOff: dst.Off, Len: n}, extra...)
}

// Reduce: see Send.
func (h *Hazards) Reduce(prog *RankProgram, src, dst Ref, n int64, extra ...int) int {
	return h.Add(prog, Step{Op: OpReduce, SrcBuf: src.Buf, SrcOff: src.Off, DstBuf: dst.Buf, DstOff: dst.Off, Len: n}, extra...)
}
