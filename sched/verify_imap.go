package sched

import (
	"math/bits"
	"slices"
	"sort"
)

// imap is an interval map over the bytes [0, size) of one buffer: sorted,
// adjacent segments that cover the buffer exactly. The verifier keeps one per
// buffer of every rank, so a 64 MiB buffer costs a few segments, not 64 Mi
// entries.
type imap[V any] struct {
	segs []seg[V]
	// shift returns the value of the part of a segment that starts d bytes
	// after the segment's start (content origins move with the offset).
	shift func(v V, d int64) V
	// same reports whether b continues a (then adjacent segments merge).
	same func(a V, alen int64, b V) bool
	// scratch is reused by write for the replacement segments.
	scratch []seg[V]
}

type seg[V any] struct {
	lo, hi int64
	v      V
}

func newIMap[V any](size int64, v V, shift func(V, int64) V, same func(V, int64, V) bool) *imap[V] {
	m := &imap[V]{shift: shift, same: same}
	if size > 0 {
		m.segs = make([]seg[V], 1, 8)
		m.segs[0] = seg[V]{0, size, v}
	}
	return m
}

// find returns the index of the segment holding byte x (len(segs) if none).
func (m *imap[V]) find(x int64) int {
	return sort.Search(len(m.segs), func(i int) bool { return m.segs[i].hi > x })
}

// cut makes x a segment boundary and returns the index of the segment that
// starts at x (len(segs) when x is the end).
func (m *imap[V]) cut(x int64) int {
	i := m.find(x)
	if i == len(m.segs) || m.segs[i].lo == x {
		return i
	}
	s := m.segs[i]
	left := seg[V]{s.lo, x, s.v}
	right := seg[V]{x, s.hi, m.shift(s.v, x-s.lo)}
	m.segs[i] = left
	m.segs = slices.Insert(m.segs, i+1, right)
	return i + 1
}

// span returns the indexes [i, j) of the segments covering [a, b) after
// cutting at both ends.
func (m *imap[V]) span(a, b int64) (int, int) {
	i := m.cut(a)
	j := m.cut(b)
	return i, j
}

// read returns the pieces of [a, b) without changing the map, with offsets
// relative to a.
func (m *imap[V]) read(a, b int64, out []seg[V]) []seg[V] {
	for i := m.find(a); i < len(m.segs) && m.segs[i].lo < b; i++ {
		s := m.segs[i]
		lo, hi := max(s.lo, a), min(s.hi, b)
		v := s.v
		if lo > s.lo {
			v = m.shift(v, lo-s.lo)
		}
		out = append(out, seg[V]{lo - a, hi - a, v})
	}
	return out
}

// write replaces [a, a+len) by pieces given relative to a (they must cover
// [0, len) in order), merging neighbours that continue each other. It
// splices once: the parts of the first and last old segments that stick out
// of [a, b) are kept around the new pieces.
func (m *imap[V]) write(a int64, pieces []seg[V]) {
	if len(pieces) == 0 {
		return
	}
	b := a + pieces[len(pieces)-1].hi
	i := m.find(a)
	j := i
	for j < len(m.segs) && m.segs[j].lo < b {
		j++
	}
	repl := m.scratch[:0]
	if i < len(m.segs) && m.segs[i].lo < a {
		s := m.segs[i]
		repl = append(repl, seg[V]{s.lo, a, s.v})
	}
	for _, p := range pieces {
		p.lo += a
		p.hi += a
		if n := len(repl); n > 0 && m.same != nil && repl[n-1].hi == p.lo && m.same(repl[n-1].v, repl[n-1].hi-repl[n-1].lo, p.v) {
			repl[n-1].hi = p.hi
			continue
		}
		repl = append(repl, p)
	}
	if j > i && m.segs[j-1].hi > b {
		s := m.segs[j-1]
		repl = append(repl, seg[V]{b, s.hi, m.shift(s.v, b-s.lo)})
	}
	m.segs = slices.Replace(m.segs, i, j, repl...)
	m.scratch = repl[:0]
	if m.same == nil {
		return
	}
	// Merge at the two seams.
	end := i + len(repl)
	if end < len(m.segs) && end > 0 && m.same(m.segs[end-1].v, m.segs[end-1].hi-m.segs[end-1].lo, m.segs[end].v) {
		m.segs[end-1].hi = m.segs[end].hi
		m.segs = slices.Delete(m.segs, end, end+1)
	}
	if i > 0 && i < len(m.segs) && m.same(m.segs[i-1].v, m.segs[i-1].hi-m.segs[i-1].lo, m.segs[i].v) {
		m.segs[i-1].hi = m.segs[i].hi
		m.segs = slices.Delete(m.segs, i, i+1)
	}
}

// rankSet is an immutable set of ranks (the contributors of reduced data).
// A singleton stores its rank only (w == nil), so the src contents of n
// ranks cost O(n), not O(n^2) bits; unions use a bitset of nw words.
type rankSet struct {
	w   []uint64
	n   int // members
	one int // the member of a singleton (w == nil)
	nw  int // words of a bitset over all ranks
}

func single(nranks, r int) *rankSet { return &rankSet{n: 1, one: r, nw: (nranks + 63) / 64} }

func fullSet(nranks int) *rankSet {
	s := &rankSet{w: make([]uint64, (nranks+63)/64), n: nranks, nw: (nranks + 63) / 64}
	for r := 0; r < nranks; r++ {
		s.w[r/64] |= 1 << (r % 64)
	}
	return s
}

func (s *rankSet) has(r int) bool {
	if s.w == nil {
		return s.one == r
	}
	return s.w[r/64]&(1<<(r%64)) != 0
}

// first returns the lowest member (the origin rank of a singleton).
func (s *rankSet) first() int {
	if s.w == nil {
		return s.one
	}
	for i, w := range s.w {
		if w != 0 {
			return i*64 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

func (s *rankSet) equal(t *rankSet) bool {
	if s == t {
		return true
	}
	if s == nil || t == nil || s.n != t.n {
		return false
	}
	switch {
	case s.w == nil:
		return t.has(s.one)
	case t.w == nil:
		return s.has(t.one)
	}
	return slices.Equal(s.w, t.w)
}

// overlap returns a rank in both sets, or -1.
func (s *rankSet) overlap(t *rankSet) int {
	switch {
	case s.w == nil:
		if t.has(s.one) {
			return s.one
		}
		return -1
	case t.w == nil:
		if s.has(t.one) {
			return t.one
		}
		return -1
	}
	for i := range s.w {
		if x := s.w[i] & t.w[i]; x != 0 {
			return i*64 + bits.TrailingZeros64(x)
		}
	}
	return -1
}

func (s *rankSet) union(t *rankSet) *rankSet {
	u := &rankSet{w: make([]uint64, s.nw), n: s.n + t.n, nw: s.nw}
	for _, x := range []*rankSet{s, t} {
		if x.w == nil {
			u.w[x.one/64] |= 1 << (x.one % 64)
			continue
		}
		for i := range x.w {
			u.w[i] |= x.w[i]
		}
	}
	return u
}

// missing lists up to limit ranks of all that s lacks.
func (s *rankSet) missing(nranks, limit int) []int {
	var out []int
	for r := 0; r < nranks && len(out) < limit; r++ {
		if !s.has(r) {
			out = append(out, r)
		}
	}
	return out
}
