package sched

import (
	"sort"
)

// VerifyMulticast checks a plan of multicasts (LowerMulticast's output) as
// Verify checks a collective: structure, send/recv matching, completion
// under rendezvous (no deadlock), no race within a rank, and final
// contents. Verify's content rule is one per collective over the whole
// communicator; a set of multicasts (the grouped allgather of MultiWrite
// section 3.1, a dispatch) says itself what each rank must end with: every
// destination r of message i holds, at place[i].DstOff of its dst, the
// bytes of the source's src buffer at place[i].From.Off. Bytes of dst that
// no message names are not checked.
func VerifyMulticast(p *Plan, msgs []Multicast, place []Placement) (*Report, error) {
	if len(place) != len(msgs) {
		return nil, verr("structure", "%d messages but %d placements", len(msgs), len(place))
	}
	v, err := verifyExecution(p)
	if err != nil {
		return nil, err
	}
	dst, err := v.replayMoves()
	if err != nil {
		return nil, err
	}
	n := len(p.Ranks)
	want := make([][]seg[cval], n)
	for i, m := range msgs {
		if m.Bytes == 0 {
			continue
		}
		if place[i].From.Buf != BufSrc {
			return nil, verr("content", "message %d starts in %s: only src contents have a known origin", i, place[i].From.Buf)
		}
		for _, r := range m.Dests.Ranks() {
			if r >= n {
				return nil, verr("content", "message %d: destination rank %d out of range", i, r)
			}
			lo := place[i].DstOff
			want[r] = append(want[r], seg[cval]{lo, lo + m.Bytes, cval{set: v.singles[m.Src], off: place[i].From.Off}})
		}
	}
	for r := range p.Ranks {
		w := want[r]
		sort.Slice(w, func(a, b int) bool { return w[a].lo < w[b].lo })
		for k := 1; k < len(w); k++ {
			if w[k].lo < w[k-1].hi {
				return nil, verr("content", "rank %d: two messages land on dst[%d,%d)", r, w[k].lo, w[k-1].hi)
			}
		}
		if len(w) > 0 && w[len(w)-1].hi > p.Ranks[r].Sizes.Dst {
			return nil, verr("content", "rank %d: a message lands past the end of dst (%d bytes)", r, p.Ranks[r].Sizes.Dst)
		}
		got := dst[r].read(0, p.Ranks[r].Sizes.Dst, nil)
		if err := v.compare(r, got, w); err != nil {
			return nil, err
		}
	}
	return v.report(), nil
}

// replayMoves replays the completion order of a plan without reductions
// over symbolic buffers and returns every rank's dst.
func (v *verifier) replayMoves() ([]*imap[cval], error) {
	p := v.p
	n := len(p.Ranks)
	maps := v.startContents()
	err := v.replay(maps, func(s *Step, r, id int) error {
		return verr("content", "%s: a multicast plan does not reduce", describe(p, r, id))
	})
	if err != nil {
		return nil, err
	}
	out := make([]*imap[cval], n)
	for r := range out {
		out[r] = maps[r][BufDst]
	}
	return out, nil
}
