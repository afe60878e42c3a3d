package sched

import (
	"fmt"
	"slices"

	"github.com/goring-hpc/goring/moe"
)

// Contents of dispatch and combine. Verify's rank-set values cannot say
// "token 5's row" or "the sum of slots 12 and 14 of token 3": rows move
// between ranks whose buffers lay them out differently, and combine sums
// rows that sit at different offsets of different ranks. Here a byte holds
// column col of the sum of the rows ids name: token ids for dispatch,
// slot ids (token*TopK + j) for combine. A copy or transfer moves values;
// a reduce of the same column of disjoint id sets holds their union.

type moeVal struct {
	ids []int32 // ascending; nil: never written
	col int64
}

func moeShift(v moeVal, d int64) moeVal {
	if v.ids != nil {
		v.col += d
	}
	return v
}

func moeSame(a moeVal, alen int64, b moeVal) bool {
	if a.ids == nil || b.ids == nil {
		return a.ids == nil && b.ids == nil
	}
	return b.col == a.col+alen && slices.Equal(a.ids, b.ids)
}

func describeMoE(x moeVal, what string) string {
	if x.ids == nil {
		return "nothing (never written)"
	}
	return fmt.Sprintf("byte %d of the sum of %s %v", x.col, what, x.ids)
}

// moeRows returns a buffer of rows, row i holding the ids of id(i).
func moeRows(rows int, H int64, id func(i int) []int32) *imap[moeVal] {
	m := newIMap(int64(rows)*H, moeVal{}, moeShift, moeSame)
	pieces := make([]seg[moeVal], rows)
	for i := range pieces {
		pieces[i] = seg[moeVal]{int64(i) * H, int64(i+1) * H, moeVal{ids: id(i)}}
	}
	m.write(0, pieces)
	return m
}

// moeContents replays the plan over symbolic rows and checks every dst
// against the routing's layout (moe.Layout).
func (v *verifier) moeContents() error {
	p := v.p
	if p.Routing == nil {
		return verr("content", "%s plan without a routing", p.Collective)
	}
	lay, err := moe.NewLayout(p.Routing)
	if err != nil {
		return verr("content", "%v", err)
	}
	if lay.R.NRanks() != len(p.Ranks) {
		return verr("content", "routing of %d ranks for a plan of %d", lay.R.NRanks(), len(p.Ranks))
	}
	H, k := lay.R.TokenBytes, lay.R.TopK
	elem := int64(max(p.DtypeBytes, 1))
	dispatch := !p.Collective.Reduces()
	what := "slots"
	if dispatch {
		what = "tokens"
	}
	maps := make([][4]*imap[moeVal], len(p.Ranks))
	want := make([]*imap[moeVal], len(p.Ranks))
	for r := range p.Ranks {
		z := p.Ranks[r].Sizes
		tokens := func(i int) []int32 { return []int32{int32(lay.Base[r] + i)} }
		slotRow := func(i int) []int32 { return []int32{lay.SlotAt[r][i]} }
		tokenOfSlot := func(i int) []int32 { return []int32{lay.SlotAt[r][i] / int32(k)} }
		allSlots := func(i int) []int32 {
			g := int32(lay.Base[r] + i)
			out := make([]int32, k)
			for j := range out {
				out[j] = g*int32(k) + int32(j)
			}
			return out
		}
		srcRows, dstRows := lay.R.Tokens[r], lay.RecvRows[r]
		srcID, dstID := tokens, tokenOfSlot
		if !dispatch {
			srcRows, dstRows, srcID, dstID = dstRows, srcRows, slotRow, allSlots
		}
		if z.Src != int64(srcRows)*H || z.Dst != int64(dstRows)*H {
			return verr("content", "rank %d: src %d and dst %d bytes, want %d and %d (%d-byte rows of the routing)",
				r, z.Src, z.Dst, int64(srcRows)*H, int64(dstRows)*H, H)
		}
		maps[r][BufSrc] = moeRows(srcRows, H, srcID)
		maps[r][BufDst] = newIMap(z.Dst, moeVal{}, moeShift, moeSame)
		maps[r][BufScratch] = newIMap(z.Scratch, moeVal{}, moeShift, moeSame)
		want[r] = moeRows(dstRows, H, dstID)
	}
	var buf, a, b, out []seg[moeVal]
	for _, g := range v.order {
		s, r, id := v.step(g)
		switch s.Op {
		case OpRecv:
			ss, sr, _ := v.step(v.partner[g])
			buf = maps[sr][ss.SrcBuf].read(ss.SrcOff, ss.SrcOff+ss.Len, buf[:0])
		case OpCopy:
			buf = maps[r][s.SrcBuf].read(s.SrcOff, s.SrcOff+s.Len, buf[:0])
		case OpReduce:
			if dispatch {
				return verr("content", "%s: dispatch reduces nothing", describe(p, r, id))
			}
			if s.Len%elem != 0 {
				return verr("content", "%s: length is not a whole number of %d-byte elements", describe(p, r, id), elem)
			}
			a = maps[r][s.DstBuf].read(s.DstOff, s.DstOff+s.Len, a[:0])
			b = maps[r][s.SrcBuf].read(s.SrcOff, s.SrcOff+s.Len, b[:0])
			out = out[:0]
			for i, j := 0, 0; i < len(a) && j < len(b); {
				lo, hi := max(a[i].lo, b[j].lo), min(a[i].hi, b[j].hi)
				x, y := moeShift(a[i].v, lo-a[i].lo), moeShift(b[j].v, lo-b[j].lo)
				if x.ids == nil || y.ids == nil || x.col != y.col {
					return verr("content", "%s: at byte %d of the step it adds %s to %s", describe(p, r, id), lo, describeMoE(y, what), describeMoE(x, what))
				}
				// A row's elements start at multiples of elem (TokenBytes is
				// whole elements), so an element split between pieces is
				// added byte-wise, which is not its sum.
				if x.col%elem != 0 || (hi-lo)%elem != 0 {
					return verr("content", "%s: bytes [%d,%d) of the step are not whole %d-byte elements (row byte %d): misaligned reduction", describe(p, r, id), lo, hi, elem, x.col)
				}
				u := make([]int32, 0, len(x.ids)+len(y.ids))
				u = append(append(u, x.ids...), y.ids...)
				slices.Sort(u)
				if len(slices.Compact(slices.Clone(u))) != len(u) {
					return verr("content", "%s: adds %s to %s: a row counted twice", describe(p, r, id), describeMoE(y, what), describeMoE(x, what))
				}
				out = append(out, seg[moeVal]{lo, hi, moeVal{ids: u, col: x.col}})
				if a[i].hi == hi {
					i++
				}
				if b[j].hi == hi {
					j++
				}
			}
			maps[r][s.DstBuf].write(s.DstOff, out)
			continue
		default:
			continue
		}
		maps[r][s.DstBuf].write(s.DstOff, buf)
	}
	for r := range p.Ranks {
		z := p.Ranks[r].Sizes.Dst
		got, w := maps[r][BufDst].read(0, z, nil), want[r].read(0, z, nil)
		i := 0
		for _, x := range w {
			for i < len(got) && got[i].hi <= x.lo {
				i++
			}
			for j := i; j < len(got) && got[j].lo < x.hi; j++ {
				lo := max(got[j].lo, x.lo)
				gv, wv := moeShift(got[j].v, lo-got[j].lo), moeShift(x.v, lo-x.lo)
				if gv.ids == nil || gv.col != wv.col || !slices.Equal(gv.ids, wv.ids) {
					return verr("content", "rank %d dst row %d holds %s, want %s", r, lo/H, describeMoE(gv, what), describeMoE(wv, what))
				}
			}
		}
	}
	return nil
}
