package sched

// Step loads: how many device transfers a send of a rank's program shares
// the GPUs with while it runs. A data plane that splits one transfer over
// several paths (the split of the Multi-path model, docs/model.md section 8.6)
// must compute the split for the links' load at that step, not for an
// idle pair: a 2-GPU ring allgather already keeps both directions of the
// pair busy every round.
//
// Which steps run at the same time is read from the program's structure:
// a step's level is the length of the longest dependency chain that ends
// at it (0 for a step that waits for nothing). The generators build rounds
// (ring, recursive doubling, lane, Parallel Rings phases, MultiWrite's one
// step) whose sends and receives wait for the same earlier steps, so the
// steps of one round share a level. A receive of this rank at the level of
// a send is data a peer pushes into this rank's GPU meanwhile, and the
// rounds of the symmetric algorithms line up across ranks.

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
	level := make([]int32, len(p.Steps))
	top := int32(0)
	for id := range p.Steps {
		l := int32(0)
		for _, d := range p.Deps(id) {
			if d >= 0 && int(d) < id {
				l = max(l, level[d]+1)
			}
		}
		level[id] = l
		top = max(top, l)
	}
	type count struct{ out, in int }
	counts := make([]count, top+1)
	senders := make([]map[int32]struct{}, top+1)
	for id := range p.Steps {
		s := &p.Steps[id]
		if (s.Op != OpSend && s.Op != OpRecv) || int(s.Peer) == p.Rank || !sameNode(int(s.Peer)) {
			continue
		}
		c := &counts[level[id]]
		if s.Op == OpSend {
			c.out++
			continue
		}
		c.in++
		if senders[level[id]] == nil {
			senders[level[id]] = map[int32]struct{}{}
		}
		senders[level[id]][s.Peer] = struct{}{}
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

func sat8(n int) uint8 { return uint8(min(n, 255)) }

// AnnotateRankLoads is AnnotateLoads for rank's program of plan, the node
// of each peer taken from the plan.
func (p *Plan) AnnotateRankLoads(rank int) {
	prog := &p.Ranks[rank]
	AnnotateLoads(prog, func(peer int) bool { return peer >= 0 && peer < len(p.Ranks) && p.Ranks[peer].Node == prog.Node })
}
