package sched

// Step loads: how many device transfers a send of a rank's program shares
// the GPUs with while it runs. A data plane that splits one transfer over
// several paths (the split of the Multi-path model, docs/model.md section 8.6)
// must compute the split for the links' load at that step, not for an
// idle pair: a 2-GPU ring allgather already keeps both directions of the
// pair busy every round.
//
// Which steps run at the same time is read from the program's structure.
// A step's level is the number of transfers (sends and receives) on the
// longest dependency chain that ends at it, the step itself left out;
// local steps do not count, so the own block copied out before the first
// send, or the reduction of what a round received, make no round of their
// own. The generators build rounds (ring and recursive doubling rounds,
// lane and Parallel Rings phases, MultiWrite's one step) whose sends wait
// for the same earlier steps, so the sends of one round share a level. A
// receive is often posted early, before its round (matchReceives): it
// takes the level of the send of this rank it pairs with. A receive at
// the level of a send is data a peer pushes into this rank's GPU
// meanwhile; the rounds of the symmetric algorithms line up across ranks.

// StepLoad counts, for one send to a peer of the same node, the transfers
// between GPUs of the node at the send's level (each at most 255).
type StepLoad struct {
	// Out: sends of this rank to peers of its node at that level, this one
	// included (0: not annotated).
	Out uint8
	// In: receives of this rank from peers of its node at that level
	// (pushes into this rank's GPU).
	In uint8
	// Senders: GPUs of the node known to push at that level: this rank and
	// every distinct peer it receives from then.
	Senders uint8
}

// AnnotateLoads sets Path.Load on every send of p to a peer for which
// sameNode is true, and clears it on every other send. It allocates
// per call (levels per step), not per send.
func AnnotateLoads(p *RankProgram, sameNode func(peer int) bool) {
	match := matchReceives(p)
	level := make([]int32, len(p.Steps))
	top := int32(0)
	// A receive takes the level of its matched send, which may come later
	// in the program: levels only grow, so passes repeat until they stop
	// changing (two or three for the generators' programs; bounded).
	for pass, changed := 0, true; changed && pass < 8; pass++ {
		changed = false
		for id := range p.Steps {
			l := int32(0)
			for _, d := range p.Deps(id) {
				if d < 0 || int(d) >= id {
					continue
				}
				// Only transfers make a round: a copy or reduction
				// between two rounds (the own block copied out first, a
				// received block reduced) belongs to the round it follows.
				step := int32(0)
				if op := p.Steps[d].Op; op == OpSend || op == OpRecv {
					step = 1
				}
				l = max(l, level[d]+step)
			}
			if m := match[id]; m >= 0 {
				l = max(l, level[m])
			}
			if l != level[id] {
				level[id], changed = l, true
			}
			top = max(top, l)
		}
	}
	type count struct{ out, in int }
	counts := make([]count, top+1)
	senders := make([]map[int32]struct{}, top+1)
	for id := range p.Steps {
		s := &p.Steps[id]
		if (s.Op != OpSend && s.Op != OpRecv) || int(s.Peer) == p.Rank || !sameNode(int(s.Peer)) {
			continue
		}
		l := level[id]
		if s.Op == OpSend {
			counts[l].out++
			continue
		}
		counts[l].in++
		if senders[l] == nil {
			senders[l] = map[int32]struct{}{}
		}
		senders[l][s.Peer] = struct{}{}
	}
	for id := range p.Steps {
		s := &p.Steps[id]
		if s.Op != OpSend {
			continue
		}
		if int(s.Peer) == p.Rank || !sameNode(int(s.Peer)) {
			s.Path.Load = StepLoad{}
			continue
		}
		c := counts[level[id]]
		s.Path.Load = StepLoad{Out: sat8(c.out), In: sat8(c.in), Senders: sat8(1 + len(senders[level[id]]))}
	}
}

// matchReceives pairs each receive with the send of this rank that runs in
// the same round, or -1. Generators post receives early (before the
// round whose data they take, with no dependencies), so a receive's own
// dependencies do not say when it fills: its peer's send does, and in a
// symmetric program the peer sends in the round in which this rank sends
// the same. When the rank sends as many messages as it receives (every
// round of allgather, allreduce, reduce_scatter and alltoallv gives as
// much as it takes), the k-th receive pairs with the k-th send, both in
// program order, which generators emit round by round. Otherwise an
// exchange peer (one this rank also sends to) pairs the k-th receive from
// q with the k-th send to q, and the other receives pair in order with
// the sends to peers this rank does not receive from (a shift).
func matchReceives(p *RankProgram) []int32 {
	sendTo := map[int32][]int32{}
	recvFrom := map[int32]bool{}
	for id := range p.Steps {
		switch s := &p.Steps[id]; s.Op {
		case OpSend:
			sendTo[s.Peer] = append(sendTo[s.Peer], int32(id))
		case OpRecv:
			recvFrom[s.Peer] = true
		}
	}
	var shift []int32 // sends to peers this rank does not receive from
	for id := range p.Steps {
		if s := &p.Steps[id]; s.Op == OpSend && !recvFrom[s.Peer] {
			shift = append(shift, int32(id))
		}
	}
	match := make([]int32, len(p.Steps))
	var sends, recvs []int32
	for id := range p.Steps {
		match[id] = -1
		switch p.Steps[id].Op {
		case OpSend:
			sends = append(sends, int32(id))
		case OpRecv:
			recvs = append(recvs, int32(id))
		}
	}
	if len(sends) == len(recvs) {
		for k, r := range recvs {
			match[r] = sends[k]
		}
		return match
	}
	seen := map[int32]int{}
	shifted := 0
	for id := range p.Steps {
		s := &p.Steps[id]
		if s.Op != OpRecv {
			continue
		}
		if sends, ok := sendTo[s.Peer]; ok {
			if k := seen[s.Peer]; k < len(sends) {
				match[id] = sends[k]
			}
			seen[s.Peer]++
			continue
		}
		if shifted < len(shift) {
			match[id] = shift[shifted]
		}
		shifted++
	}
	return match
}

func sat8(n int) uint8 { return uint8(min(n, 255)) }

// AnnotateRankLoads is AnnotateLoads for rank's program of plan, the node
// of each peer taken from the plan.
func (p *Plan) AnnotateRankLoads(rank int) {
	prog := &p.Ranks[rank]
	AnnotateLoads(prog, func(peer int) bool { return peer >= 0 && peer < len(p.Ranks) && p.Ranks[peer].Node == prog.Node })
}
