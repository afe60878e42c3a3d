package sched

import "fmt"

// Lowering relay trees into per-rank programs (see multiwrite.go).

// Placement says where a message lies on its source (From, in any buffer)
// and where it lands in every destination's dst buffer (DstOff).
type Placement struct {
	From   Ref
	DstOff int64
}

// LowerMulticast appends the steps of trees (planned for msgs) to plan:
// each destination receives message i at place[i].DstOff of its dst, a
// source listed in its own Dests copies it there locally, relays that are
// not destinations hold it in scratch slots (one per hop into them, after
// any scratch the plan's sizes already have). Every rank's Sizes.Src and
// Sizes.Dst must be set and its program empty (deps come from Hazards over
// what LowerMulticast itself emits). chunks > 1 pipelines every hop in that
// many pieces. Tags are ChunkTag(2*i+part, piece, chunks).
func LowerMulticast(plan *Plan, msgs []Multicast, trees []RelayTree, place []Placement, elem, chunks int) error {
	if len(trees) != len(msgs) || len(place) != len(msgs) {
		return fmt.Errorf("multiwrite: %d messages, %d trees, %d placements", len(msgs), len(trees), len(place))
	}
	l, err := newMulticastLowerer(plan, -1, elem, chunks)
	if err != nil {
		return err
	}
	for i := range msgs {
		l.message(i, msgs[i], trees[i], place[i])
	}
	l.finish()
	return nil
}

// multicastLowerer emits the steps of relay trees one message at a time,
// for every rank (only < 0) or for rank only alone (GenerateRank): a rank's
// steps, tags and scratch slots depend only on the trees, so both ways give
// it the same program.
type multicastLowerer struct {
	plan         *Plan
	only         int
	elem, chunks int
	hz           []*Hazards
	scratch      []int64 // next free scratch byte per rank
	slot         []int64 // per hop of the current part: scratch offset, -1 for dst
	last         []int   // per hop of the current part: its last send step, -1 if none here
}

// hazardScratch is the scratch size Hazards track while slots are handed
// out: an interval map of one segment, so its size costs nothing, and the
// real size is set when lowering ends.
const hazardScratch = int64(1) << 60

func newMulticastLowerer(plan *Plan, only, elem, chunks int) (*multicastLowerer, error) {
	l := &multicastLowerer{plan: plan, only: only, elem: elem, chunks: chunks,
		hz: make([]*Hazards, plan.NRanks), scratch: make([]int64, plan.NRanks)}
	for r := range plan.Ranks {
		if only >= 0 && r != only {
			continue
		}
		if n := len(plan.Ranks[r].Steps); n > 0 {
			return nil, fmt.Errorf("multiwrite: rank %d already has %d steps; lower into empty programs", r, n)
		}
		z := plan.Ranks[r].Sizes
		l.scratch[r] = z.Scratch
		z.Scratch = hazardScratch
		l.hz[r] = newHazardsSized(&plan.Ranks[r], z)
	}
	return l, nil
}

func (l *multicastLowerer) mine(r int) bool { return l.only < 0 || r == l.only }

// message emits message i: the source's own copy, then every hop of every
// part, piece by piece.
func (l *multicastLowerer) message(i int, m Multicast, tr RelayTree, pl Placement) {
	if m.Dests.Has(m.Src) && m.Bytes > 0 && l.mine(m.Src) {
		l.hz[m.Src].Copy(pl.From, At(BufDst, pl.DstOff), m.Bytes)
	}
	for pi, part := range tr.Parts {
		l.slot = l.slot[:0]
		for _, hp := range part.Hops {
			s := int64(-1)
			if !m.Dests.Has(hp.To) {
				s = l.scratch[hp.To]
				l.scratch[hp.To] += part.Span.Len
			}
			l.slot = append(l.slot, s)
		}
		// where holds the copy of this part on the receiving end of hop hi.
		where := func(hi int) Ref {
			if hi < 0 {
				return Ref{pl.From.Buf, pl.From.Off + part.Span.Off}
			}
			if s := l.slot[hi]; s >= 0 {
				return At(BufScratch, s)
			}
			return At(BufDst, pl.DstOff+part.Span.Off)
		}
		k := ChunkCount(part.Span.Len, l.chunks, l.elem)
		l.last = l.last[:0]
		for hi, hp := range part.Hops {
			from, to := where(hp.Parent), where(hi)
			prev := -1
			if hp.After >= 0 {
				prev = l.last[hp.After]
			}
			for c := 0; c < k; c++ {
				pc := ChunkSpan(Span{0, part.Span.Len}, k, c, l.elem)
				tag := ChunkTag(2*i+pi, c, l.chunks)
				if l.mine(hp.From) {
					// Pieces of one hop go one after another (piece c+1's
					// send waits for piece c's), so the relay forwards piece
					// c while piece c+1 is on the wire; sent all at once they
					// would share the link and arrive together.
					prev = l.hz[hp.From].Send(hp.To, tag, Ref{from.Buf, from.Off + pc.Off}, pc.Len, hp.Path, prev)
				}
				if l.mine(hp.To) {
					l.hz[hp.To].Recv(hp.From, tag, Ref{to.Buf, to.Off + pc.Off}, pc.Len)
				}
			}
			l.last = append(l.last, prev) // the hop's last send (on From), for hops After it
		}
	}
}

// finish sets every lowered rank's scratch size to the slots handed out.
func (l *multicastLowerer) finish() {
	for r := range l.plan.Ranks {
		if l.mine(r) {
			l.plan.Ranks[r].Sizes.Scratch = l.scratch[r]
		}
	}
}

// lowerMulticastAlg is the body of a registered MultiWrite algorithm: it
// plans count messages (msg(i) gives message i and its placement) one at a
// time and lowers them into every rank's program (only < 0, sizes z for
// all) or rank only's. A topology the planner cannot serve (nodes without
// rails, a GPU without a NIC) is Unsupported, on every rank alike.
func lowerMulticastAlg(alg string, spec *Spec, plan *Plan, only, count int, msg func(i int) (Multicast, Placement), z Sizes, opt RelayOptions) error {
	b, err := newTreeBuilder(spec.Topo, opt)
	if err != nil {
		return Unsupported(alg, "%v", err)
	}
	if only < 0 {
		plan.SetSizes(z)
	} else {
		plan.Ranks[only].Sizes = z
	}
	l, err := newMulticastLowerer(plan, only, spec.DtypeBytes, spec.Chunks)
	if err != nil {
		return err
	}
	for i := 0; i < count; i++ {
		m, pl := msg(i)
		tr, err := b.tree(i, m, spec.DtypeBytes)
		if err != nil {
			return Unsupported(alg, "%v", err)
		}
		l.message(i, m, tr, pl)
	}
	l.finish()
	return nil
}
