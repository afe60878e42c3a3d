package sched

import "fmt"

// Race check of one rank. Steps are visited in id order, which is a
// topological order because deps point backwards. Each buffer keeps an
// interval map of (last writer, readers since that write), the bookkeeping
// of a vector-clock race detector: a read must be ordered after the last
// writer of its bytes, a write after the last writer and after every reader
// since. Any race in the program shows up as one of these checks failing
// (if w1 -> w2 in order and r races w1, r cannot be ordered after w2
// either). "Ordered" means reachable through the rank's own deps; ordering
// that would only come through other ranks' transfers is not relied on.

// raceMaxBitsetSteps bounds the reachability bitsets (n*n bits): above it
// the check computes ancestors on demand, once per step that needs them.
var raceMaxBitsetSteps = 24576

type raceVal struct {
	writer  int32 // last step that wrote these bytes, -1 for none
	readers int32 // head of the list of readers since that write in a readerPool, -1 for none
}

func raceShift(v raceVal, _ int64) raceVal { return v }

// readerPool holds persistent, prepend-only lists of reader steps: a
// segment split in two shares its list, and adding a reader to one part
// prepends a node without touching the other, so splits copy nothing.
type readerPool struct {
	step []int32
	next []int32
}

func (p *readerPool) push(head, step int32) int32 {
	p.step = append(p.step, step)
	p.next = append(p.next, head)
	return int32(len(p.step) - 1)
}

func (p *readerPool) reset() {
	p.step, p.next = p.step[:0], p.next[:0]
}

// happensBefore answers "does step a reach step b through deps" for a < b.
type happensBefore struct {
	rp    *RankProgram
	words int
	anc   []uint64 // bitset rows, when small enough
	// on-demand mode
	mark  []int32
	markB int32
	stack []int32
}

func newHappensBefore(rp *RankProgram) *happensBefore {
	n := len(rp.Steps)
	h := &happensBefore{rp: rp}
	if n <= raceMaxBitsetSteps {
		h.words = (n + 63) / 64
		h.anc = make([]uint64, n*h.words)
		for i := 0; i < n; i++ {
			row := h.anc[i*h.words : (i+1)*h.words]
			for _, d := range rp.Deps(i) {
				drow := h.anc[int(d)*h.words : (int(d)+1)*h.words]
				for w := range row {
					row[w] |= drow[w]
				}
				row[d/64] |= 1 << (d % 64)
			}
		}
		return h
	}
	h.mark = make([]int32, n)
	for i := range h.mark {
		h.mark[i] = -1
	}
	h.markB = -1
	return h
}

func (h *happensBefore) before(a, b int32) bool {
	if a >= b {
		return false
	}
	if h.anc != nil {
		return h.anc[int(b)*h.words+int(a)/64]&(1<<(a%64)) != 0
	}
	if h.markB != b {
		h.markB = b
		h.stack = append(h.stack[:0], h.rp.Deps(int(b))...)
		for len(h.stack) > 0 {
			x := h.stack[len(h.stack)-1]
			h.stack = h.stack[:len(h.stack)-1]
			if h.mark[x] == b {
				continue
			}
			h.mark[x] = b
			h.stack = append(h.stack, h.rp.Deps(int(x))...)
		}
	}
	return h.mark[a] == b
}

func checkRaces(p *Plan, r int) error {
	rp := &p.Ranks[r]
	if len(rp.Steps) < 2 {
		return nil
	}
	hb := newHappensBefore(rp)
	pool := &readerPool{}
	var maps [4]*imap[raceVal]
	for b := BufSrc; b <= BufScratch; b++ {
		maps[b] = newIMap(rp.Sizes.Of(b), raceVal{writer: -1, readers: -1}, raceShift, nil)
	}
	conflict := func(id int, other int32, what string) error {
		return verr("race", "%s and %s may run at the same time (neither depends on the other) and %s",
			describe(p, r, int(other)), describe(p, r, id), what)
	}
	read := func(id int, b Buf, off, n int64) error {
		if n == 0 {
			return nil
		}
		m := maps[b]
		i, j := m.span(off, off+n)
		for k := i; k < j; k++ {
			s := &m.segs[k]
			if w := s.v.writer; w >= 0 && w != int32(id) && !hb.before(w, int32(id)) {
				return conflict(id, w, fmt.Sprintf("the second reads %s[%d,%d) that the first writes", b, s.lo, s.hi))
			}
			if h := s.v.readers; h < 0 || pool.step[h] != int32(id) {
				s.v.readers = pool.push(h, int32(id))
			}
		}
		return nil
	}
	write := func(id int, b Buf, off, n int64) error {
		if n == 0 {
			return nil
		}
		m := maps[b]
		i, j := m.span(off, off+n)
		for k := i; k < j; k++ {
			s := &m.segs[k]
			if w := s.v.writer; w >= 0 && w != int32(id) && !hb.before(w, int32(id)) {
				return conflict(id, w, fmt.Sprintf("both write %s[%d,%d)", b, s.lo, s.hi))
			}
			for x := s.v.readers; x >= 0; x = pool.next[x] {
				rd := pool.step[x]
				if rd != int32(id) && !hb.before(rd, int32(id)) {
					return conflict(id, rd, fmt.Sprintf("the second writes %s[%d,%d) that the first reads", b, s.lo, s.hi))
				}
			}
		}
		m.segs[i] = seg[raceVal]{m.segs[i].lo, m.segs[j-1].hi, raceVal{writer: int32(id), readers: -1}}
		m.segs = append(m.segs[:i+1], m.segs[j:]...)
		return nil
	}
	for id := range rp.Steps {
		s := &rp.Steps[id]
		var err error
		switch s.Op {
		case OpSend:
			err = read(id, s.SrcBuf, s.SrcOff, s.Len)
		case OpRecv:
			err = write(id, s.DstBuf, s.DstOff, s.Len)
		case OpCopy:
			if err = read(id, s.SrcBuf, s.SrcOff, s.Len); err == nil {
				err = write(id, s.DstBuf, s.DstOff, s.Len)
			}
		case OpReduce:
			if err = read(id, s.SrcBuf, s.SrcOff, s.Len); err == nil {
				if err = read(id, s.DstBuf, s.DstOff, s.Len); err == nil {
					err = write(id, s.DstBuf, s.DstOff, s.Len)
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
