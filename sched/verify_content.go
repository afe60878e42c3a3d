package sched

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goring-hpc/goring/coll"
)

// Symbolic contents. A byte holds either nothing yet (set == nil) or "the
// element at origin offset off, reduced over the ranks in set": rank r's src
// byte x starts as ({r}, x); a copy or transfer moves values; a reduce of two
// values of the same origin offset and disjoint sets gives their union. An
// allgather result is ({j}, x) at block j, an allreduce result (all ranks, x).
type cval struct {
	set *rankSet
	off int64
}

func cshift(v cval, d int64) cval {
	if v.set != nil {
		v.off += d
	}
	return v
}

func csame(a cval, alen int64, b cval) bool {
	if a.set == nil || b.set == nil {
		return a.set == nil && b.set == nil
	}
	return b.off == a.off+alen && a.set.equal(b.set)
}

func (v *verifier) describeVal(x cval) string {
	if x.set == nil {
		return "nothing (never written)"
	}
	n := len(v.p.Ranks)
	if x.set.n == 1 {
		return fmt.Sprintf("rank %d's src at %d", x.set.first(), x.off)
	}
	if x.set.n == n {
		return fmt.Sprintf("origin offset %d reduced over all %d ranks", x.off, n)
	}
	return fmt.Sprintf("origin offset %d reduced over %d of %d ranks (missing %v)", x.off, x.set.n, n, x.set.missing(n, 4))
}

// startContents returns every rank's buffers before the plan runs, as
// symbolic contents: src holds the rank's own data, dst and scratch
// nothing. It also sets the rank sets the contents share.
func (v *verifier) startContents() [][4]*imap[cval] {
	p := v.p
	n := len(p.Ranks)
	v.singles = make([]*rankSet, n)
	for r := range v.singles {
		v.singles[r] = single(n, r)
	}
	v.all = fullSet(n)
	maps := make([][4]*imap[cval], n)
	for r := range p.Ranks {
		z := p.Ranks[r].Sizes
		maps[r][BufSrc] = newIMap(z.Src, cval{set: v.singles[r]}, cshift, csame)
		maps[r][BufDst] = newIMap(z.Dst, cval{}, cshift, csame)
		if p.Collective == coll.Allgather || p.Collective == coll.Alltoallv {
			// dst ends as n blocks from n origins: room for them up front.
			maps[r][BufDst].segs = slices.Grow(maps[r][BufDst].segs, 2*n+2)
		}
		maps[r][BufScratch] = newIMap(z.Scratch, cval{}, cshift, csame)
	}
	return maps
}

// contents replays the completion order over symbolic buffers and checks
// every dst against the collective's result.
func (v *verifier) contents() error {
	p := v.p
	maps := v.startContents()
	if err := v.replay(maps, v.reducer(maps)); err != nil {
		return err
	}
	for r := range p.Ranks {
		want, err := v.expected(r)
		if err != nil {
			return err
		}
		got := maps[r][BufDst].read(0, p.Ranks[r].Sizes.Dst, nil)
		if err := v.compare(r, got, want); err != nil {
			return err
		}
	}
	return nil
}

// replay applies the completion order to the symbolic buffers maps: a
// recv writes what its matched send reads, a copy what it reads, and a
// reduce is handed to reduce.
func (v *verifier) replay(maps [][4]*imap[cval], reduce func(s *Step, r, id int) error) error {
	var buf []seg[cval]
	for _, g := range v.order {
		s, r, id := v.step(g)
		switch s.Op {
		case OpRecv:
			ss, sr, _ := v.step(v.partner[g])
			buf = maps[sr][ss.SrcBuf].read(ss.SrcOff, ss.SrcOff+ss.Len, buf[:0])
		case OpCopy:
			buf = maps[r][s.SrcBuf].read(s.SrcOff, s.SrcOff+s.Len, buf[:0])
		case OpReduce:
			if err := reduce(s, r, id); err != nil {
				return err
			}
			continue
		default:
			continue
		}
		maps[r][s.DstBuf].write(s.DstOff, buf)
	}
	return nil
}

// reducer returns the replay of a reduce step over maps: the step must
// combine the same whole elements of disjoint sets of ranks, and its
// destination then holds their union.
func (v *verifier) reducer(maps [][4]*imap[cval]) func(s *Step, r, id int) error {
	p := v.p
	elem := int64(p.DtypeBytes)
	var bufA, bufB, out []seg[cval]
	return func(s *Step, r, id int) error {
		if s.Len%elem != 0 {
			return verr("content", "%s: length is not a whole number of %d-byte elements", describe(p, r, id), elem)
		}
		bufA = maps[r][s.DstBuf].read(s.DstOff, s.DstOff+s.Len, bufA[:0])
		bufB = maps[r][s.SrcBuf].read(s.SrcOff, s.SrcOff+s.Len, bufB[:0])
		out = out[:0]
		i, j := 0, 0
		for i < len(bufA) && j < len(bufB) {
			a, b := bufA[i], bufB[j]
			lo := max(a.lo, b.lo)
			hi := min(a.hi, b.hi)
			x, y := cshift(a.v, lo-a.lo), cshift(b.v, lo-b.lo)
			if x.set == nil || y.set == nil {
				which := "destination"
				if y.set == nil {
					which = "source"
				}
				return verr("content", "%s: reduces bytes [%d,%d) of the step whose %s was never written", describe(p, r, id), lo, hi, which)
			}
			if x.off != y.off {
				return verr("content", "%s: at byte %d of the step it combines %s with %s (different elements)", describe(p, r, id), lo, v.describeVal(x), v.describeVal(y))
			}
			if x.off%elem != 0 || (hi-lo)%elem != 0 {
				return verr("content", "%s: bytes [%d,%d) of the step are not whole %d-byte elements (origin offset %d): misaligned reduction", describe(p, r, id), lo, hi, elem, x.off)
			}
			if k := x.set.overlap(y.set); k >= 0 {
				return verr("content", "%s: rank %d's contribution at origin offset %d would be reduced twice", describe(p, r, id), k, x.off)
			}
			out = append(out, seg[cval]{lo, hi, cval{set: x.set.union(y.set), off: x.off}})
			if a.hi == hi {
				i++
			}
			if b.hi == hi {
				j++
			}
		}
		maps[r][s.DstBuf].write(s.DstOff, out)
		return nil
	}
}

// expected returns what rank r's dst must hold, checking the buffer sizes
// the collective implies first.
func (v *verifier) expected(r int) ([]seg[cval], error) {
	p := v.p
	n := len(p.Ranks)
	z := p.Ranks[r].Sizes
	B := p.Bytes
	size := func(name string, got, want int64) error {
		if got != want {
			return verr("content", "rank %d: %s buffer is %d bytes, want %d for %s of %d bytes over %d ranks", r, name, got, want, p.Collective, B, n)
		}
		return nil
	}
	var want []seg[cval]
	switch p.Collective {
	case coll.Allgather:
		if err := firstErr(size("src", z.Src, B), size("dst", z.Dst, int64(n)*B)); err != nil {
			return nil, err
		}
		if B > 0 {
			for j := 0; j < n; j++ {
				want = append(want, seg[cval]{int64(j) * B, int64(j+1) * B, cval{v.singles[j], 0}})
			}
		}
	case coll.Allreduce:
		if err := firstErr(size("src", z.Src, B), size("dst", z.Dst, B)); err != nil {
			return nil, err
		}
		if B > 0 {
			want = append(want, seg[cval]{0, B, cval{v.all, 0}})
		}
	case coll.ReduceScatter:
		if err := firstErr(size("src", z.Src, int64(n)*B), size("dst", z.Dst, B)); err != nil {
			return nil, err
		}
		if B > 0 {
			want = append(want, seg[cval]{0, B, cval{v.all, int64(r) * B}})
		}
	case coll.Bcast:
		if err := size("dst", z.Dst, B); err != nil {
			return nil, err
		}
		if B > 0 {
			want = append(want, seg[cval]{0, B, cval{v.singles[rootOf(p)], 0}})
		}
	case coll.Alltoallv:
		if len(p.Counts) != n {
			return nil, verr("content", "alltoallv plan has a %d-row counts matrix for %d ranks", len(p.Counts), n)
		}
		var rowSum, colSum int64
		for j := 0; j < n; j++ {
			if len(p.Counts[j]) != n {
				return nil, verr("content", "alltoallv counts row %d has %d entries, want %d", j, len(p.Counts[j]), n)
			}
			rowSum += p.Counts[r][j]
			colSum += p.Counts[j][r]
		}
		if err := firstErr(size("src", z.Src, rowSum), size("dst", z.Dst, colSum)); err != nil {
			return nil, err
		}
		if v.rowPrefix == nil {
			v.rowPrefix = make([][]int64, n)
			for i := range v.rowPrefix {
				v.rowPrefix[i] = PrefixSums(p.Counts[i])
			}
		}
		var rd int64
		for i := 0; i < n; i++ {
			c := p.Counts[i][r]
			if c > 0 {
				sd := v.rowPrefix[i][r]
				want = append(want, seg[cval]{rd, rd + c, cval{v.singles[i], sd}})
			}
			rd += c
		}
	default:
		return nil, verr("content", "no content rule for collective %q", p.Collective)
	}
	return want, nil
}

// rootOf finds the bcast root: the plan records it in Root.
func rootOf(p *Plan) int { return p.Root }

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// compare walks the actual and wanted pieces of rank r's dst together.
func (v *verifier) compare(r int, got, want []seg[cval]) error {
	i := 0
	for _, w := range want {
		for i < len(got) && got[i].hi <= w.lo {
			i++
		}
		for k := i; k < len(got) && got[k].lo < w.hi; k++ {
			g := got[k]
			lo, hi := max(g.lo, w.lo), min(g.hi, w.hi)
			x := cshift(g.v, lo-g.lo)
			y := cshift(w.v, lo-w.lo)
			if x.set == nil || !x.set.equal(y.set) || x.off != y.off {
				return verr("content", "rank %d dst[%d,%d) holds %s, want %s", r, lo, hi, v.describeVal(x), strings.TrimSuffix(v.describeVal(y), " (never written)"))
			}
		}
	}
	return nil
}
