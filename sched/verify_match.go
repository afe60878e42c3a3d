package sched

import "slices"

// Matching, the second check of Verify: for each (sender, receiver, tag)
// the k-th send in step order matches the k-th recv in step order, and the
// two move the same number of bytes. Both sides are sorted by (receiver,
// sender, tag, step) and walked together, which is cheaper than a map for
// the 10^4..10^6 transfers of big plans.

// transfer is one side of a transfer: global step g, a send or a recv of
// data going from rank from to rank to with tag.
type transfer struct {
	from, to, tag int32
	g             int32
}

// cmpTransfer orders transfers by (receiver, sender, tag, step).
func cmpTransfer(a, b transfer) int {
	switch {
	case a.to != b.to:
		return int(a.to) - int(b.to)
	case a.from != b.from:
		return int(a.from) - int(b.from)
	case a.tag != b.tag:
		if a.tag < b.tag {
			return -1
		}
		return 1
	}
	return int(a.g) - int(b.g)
}

// cmpKey orders transfers by (receiver, sender, tag): those a send and a
// recv must share to match.
func cmpKey(a, b transfer) int {
	a.g, b.g = 0, 0
	return cmpTransfer(a, b)
}

// match sets v.partner of every send and recv to the step it matches (-1
// for local ops), or returns the first mismatch.
func (v *verifier) match() error {
	sends, recvs := v.transfers()
	v.partner = make([]int32, v.total)
	for i := range v.partner {
		v.partner[i] = -1
	}
	v.chain(sends)
	v.chain(recvs)
	complete, err := v.pair(sends, recvs)
	if err != nil || complete {
		return err
	}
	if err := v.unmatched(OpRecv); err != nil {
		return err
	}
	return v.unmatched(OpSend)
}

// chain links each send (recv) to the next one of its rank with the same
// peer and tag: x is sorted by (receiver, sender, tag, step), so those are
// neighbours. The executor posts one (op, peer, tag) chain in step order
// (docs/contracts.md: pairs of one triple match in ascending step id), and
// run holds a step until its predecessor is posted.
func (v *verifier) chain(x []transfer) {
	if v.nextSame == nil {
		v.nextSame = make([]int32, v.total)
		v.prevSame = make([]int32, v.total)
		for i := range v.nextSame {
			v.nextSame[i], v.prevSame[i] = -1, -1
		}
	}
	for i := 1; i < len(x); i++ {
		if cmpKey(x[i-1], x[i]) == 0 {
			v.nextSame[x[i-1].g] = x[i].g
			v.prevSame[x[i].g] = x[i-1].g
		}
	}
}

// transfers lists the sends and the recvs of the plan, each sorted by
// (receiver, sender, tag, step). Recvs come grouped by receiver already;
// sends are bucketed by receiver (a counting sort, stable), then every
// bucket is sorted on its own, which is much cheaper than one global sort.
func (v *verifier) transfers() (sends, recvs []transfer) {
	p := v.p
	n := len(p.Ranks)
	perTo := make([]int, n+1) // bucket r of sends: [perTo[r], perTo[r+1])
	nsend, nrecv := 0, 0
	for r := range p.Ranks {
		for id := range p.Ranks[r].Steps {
			switch s := &p.Ranks[r].Steps[id]; s.Op {
			case OpSend:
				perTo[s.Peer+1]++
				nsend++
			case OpRecv:
				nrecv++
			}
		}
	}
	for r := 0; r < n; r++ {
		perTo[r+1] += perTo[r]
	}
	sends = make([]transfer, nsend)
	recvs = make([]transfer, 0, nrecv)
	recvAt := make([]int, n+1) // recvs of rank r: [recvAt[r], recvAt[r+1])
	fill := append([]int(nil), perTo[:n]...)
	for r := range p.Ranks {
		recvAt[r] = len(recvs)
		for id := range p.Ranks[r].Steps {
			s := &p.Ranks[r].Steps[id]
			g := int32(v.base[r] + id)
			switch s.Op {
			case OpSend:
				sends[fill[s.Peer]] = transfer{int32(r), s.Peer, s.Tag, g}
				fill[s.Peer]++
			case OpRecv:
				recvs = append(recvs, transfer{s.Peer, int32(r), s.Tag, g})
			}
		}
	}
	recvAt[n] = len(recvs)
	sortBuckets(sends, perTo)
	sortBuckets(recvs, recvAt)
	return sends, recvs
}

// sortBuckets sorts x[at[r]:at[r+1]] for every r, skipping buckets already
// in order (most are: generators emit in step order).
func sortBuckets(x []transfer, at []int) {
	for r := 0; r+1 < len(at); r++ {
		b := x[at[r]:at[r+1]]
		if !slices.IsSortedFunc(b, cmpTransfer) {
			slices.SortFunc(b, cmpTransfer)
		}
	}
}

// pair walks the sorted sends and recvs together and partners equal keys
// in order. It fails on a pair of different lengths, and reports whether
// every send and every recv found a partner.
func (v *verifier) pair(sends, recvs []transfer) (complete bool, err error) {
	i, j := 0, 0
	complete = true
	for i < len(sends) || j < len(recvs) {
		var c int
		switch {
		case i == len(sends):
			c = 1
		case j == len(recvs):
			c = -1
		default:
			c = cmpKey(sends[i], recvs[j])
		}
		switch {
		case c < 0:
			complete, i = false, i+1 // a send with no recv left for its key
		case c > 0:
			complete, j = false, j+1
		default:
			ss, sr, sid := v.step(sends[i].g)
			rs, rr, rid := v.step(recvs[j].g)
			if ss.Len != rs.Len {
				return false, verr("match", "%s sends %d bytes but its matching %s receives %d", describe(v.p, sr, sid), ss.Len, describe(v.p, rr, rid), rs.Len)
			}
			v.partner[sends[i].g] = recvs[j].g
			v.partner[recvs[j].g] = sends[i].g
			i++
			j++
		}
	}
	return complete, nil
}

// unmatched reports the first (by rank, step) step of op that has no partner.
func (v *verifier) unmatched(op StepOp) error {
	p := v.p
	for r := range p.Ranks {
		for id := range p.Ranks[r].Steps {
			s := &p.Ranks[r].Steps[id]
			if s.Op != op || v.partner[v.base[r]+id] >= 0 {
				continue
			}
			// Count how many partners of this key exist, for the message.
			n := 0
			for id2 := range p.Ranks[s.Peer].Steps {
				t := &p.Ranks[s.Peer].Steps[id2]
				if t.Op != op && (t.Op == OpSend || t.Op == OpRecv) && t.Peer == int32(r) && t.Tag == s.Tag {
					n++
				}
			}
			if op == OpSend {
				return verr("match", "%s has no matching recv: rank %d receives from rank %d with tag %d only %d time(s)",
					describe(p, r, id), s.Peer, r, s.Tag, n)
			}
			return verr("match", "%s has no matching send: rank %d sends rank %d with tag %d only %d time(s)",
				describe(p, r, id), s.Peer, r, s.Tag, n)
		}
	}
	return nil
}
