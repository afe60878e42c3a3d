package sched

import "slices"

// Hazards orders the steps of one rank by the bytes they touch, so a
// generator can emit steps in program order and get exactly the deps that
// make it race-free: a step waits for the last writer of every byte it reads
// or writes (read-after-write, write-after-write) and for every reader since
// then of every byte it writes (write-after-read). It is the same
// bookkeeping Verify uses to find races, run forwards. A Hazards belongs
// to one rank program and speaks the program's verbs (steps.go), with the
// deps given taken as extra ordering on top of the hazards:
//
//	prog.Sizes = Sizes{...} // final sizes first
//	h := NewHazards(prog)
//	id := h.Recv(peer, tag, At(BufDst, off), n, lockstepDeps...)
//
// Cost: O(log segments + touched segments) per step; deps are deduplicated.
type Hazards struct {
	prog *RankProgram
	maps [4]*imap[raceVal]
	pool readerPool
	seen map[int32]bool
}

// NewHazards adds steps to prog, tracking its buffers at prog.Sizes (set
// the sizes before adding steps).
func NewHazards(prog *RankProgram) *Hazards { return newHazardsSized(prog, prog.Sizes) }

// newHazardsSized tracks buffers of sizes z rather than prog's own, for a
// generator that sets prog's scratch size only once it has handed out all
// its slots (see multiwrite_lower.go).
func newHazardsSized(prog *RankProgram, z Sizes) *Hazards {
	h := &Hazards{prog: prog, seen: map[int32]bool{}}
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

// Add appends s to the program with the deps its bytes need plus extra,
// records it, and returns its id.
func (h *Hazards) Add(s Step, extra ...int) int {
	id := h.prog.Add(s, h.Deps(s, extra...)...)
	h.Record(id, s)
	return id
}

// Send, Recv, Copy and Reduce are the program's verbs (steps.go) with the
// hazard deps added to extra.
func (h *Hazards) Send(peer, tag int, src Ref, n int64, path Path, extra ...int) int {
	var s Step
	s.setSend(peer, tag, src, n, path)
	return h.Add(s, extra...)
}

// Recv: see Send.
func (h *Hazards) Recv(peer, tag int, dst Ref, n int64, extra ...int) int {
	var s Step
	s.setRecv(peer, tag, dst, n)
	return h.Add(s, extra...)
}

// Copy: see Send.
func (h *Hazards) Copy(src, dst Ref, n int64, extra ...int) int {
	var s Step
	s.setCopy(src, dst, n)
	return h.Add(s, extra...)
}

// Reduce: see Send.
func (h *Hazards) Reduce(src, dst Ref, n int64, extra ...int) int {
	var s Step
	s.setReduce(src, dst, n)
	return h.Add(s, extra...)
}
