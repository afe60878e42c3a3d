package sched

// intraCongestionAware is the congestion-aware intra-node algorithm of
// Parallel Rings section III-C (Table I "Proposed", Fig. 6, Algorithm 2),
// generalised from the paper's 4-GPU node to any node whose GPUs pair up
// by NVLink across two sockets. The pairing comes from the topology's
// NVLink links (nvlinkPairs); pairs are ordered by their lower GPU index,
// pair k = (a_k, b_k) with a_k < b_k, and the virtual ring is
//
//	L = a_0, a_1, ..., a_{M-1}, b_0, b_1, ..., b_{M-1}     (M = G/2 pairs)
//
// which for cluster A (pairs 0-1 and 2-3) is the paper's 0 -> 2 -> 1 -> 3 -> 0.
//
// Phase 1: each GPU swaps its own block with its NVLink peer.
// Phase 2: in rounds s = 1..M-1 each GPU sends only its own block s places
// ahead on L and receives from s places behind. In round s the two GPUs of
// pair k receive the two blocks of pair k-s, one each, so every block
// crosses to each other pair exactly once and no GPU receives two blocks at
// a time. For M = 2 this is the paper's single virtual-ring step.
// Phase 3: each GPU forwards what it got in round s to its NVLink peer and
// gets the peer's round-s block back.
//
// Rounds of one phase are sequential per GPU (a send waits for the GPU's
// previous send of the phase), as Table I's steps are. Phase 3 is deferred
// as Algorithm 2 defers it (lines 46-49 run in the next loop iteration): the
// third phase of the blocks that arrived in ring round i starts once the
// ring receive of round i+1 has completed, so ring round i+1, phases 1-2 of
// round i and phase 3 of round i-1 overlap: three iterations in flight.
type intraCongestionAware struct {
	peer []int // NVLink partner of each local GPU
	pos  []int // position of each local GPU on the virtual ring
	ring []int // the virtual ring L
}

func newIntraCongestionAware(alg string, spec *Spec, sh hierShape) (intraAlgorithm, error) {
	if sh.gpus == 1 {
		return intraLinear{}, nil // nothing to exchange inside a node
	}
	node := &spec.Topo.Nodes[0]
	peer, reason := nvlinkPairs(node)
	if reason != "" {
		return nil, Unsupported(alg, "intra-node algorithm congestion_aware needs GPUs that pair up by NVLink across two sockets (Parallel Rings Fig. 2b), but on node %q %s", node.Name, reason)
	}
	G := len(peer)
	ca := intraCongestionAware{peer: peer, pos: make([]int, G), ring: make([]int, 0, G)}
	for a := 0; a < G; a++ {
		if a < peer[a] {
			ca.ring = append(ca.ring, a)
		}
	}
	for _, a := range ca.ring[:G/2] {
		ca.ring = append(ca.ring, peer[a])
	}
	for i, x := range ca.ring {
		ca.pos[x] = i
	}
	return ca, nil
}

// Tag kinds: phase 1 is kindIntra, phase-2 round s is kindIntra+s, phase-3
// round s is kindIntra+M-1+s.
func (ca intraCongestionAware) early(g *intraGroup) {
	G, l := g.run.sh.gpus, g.run.p.Local
	M := G / 2
	peer, pos := ca.peer[l], ca.pos[l]
	g.recv(peer, peer, kindIntra)
	g.send(l, peer, kindIntra, g.ready)
	g.stash = g.stash[:0]
	prev := -1
	for s := 1; s < M; s++ {
		from, to := ca.ring[(pos-s+G)%G], ca.ring[(pos+s)%G]
		g.stash = append(g.stash, g.recv(from, from, kindIntra+s))
		if id := g.send(l, to, kindIntra+s, g.ready, prev); id >= 0 {
			prev = id
		}
	}
}

func (ca intraCongestionAware) late(g *intraGroup, postAfter int) {
	G, l := g.run.sh.gpus, g.run.p.Local
	M := G / 2
	peer, pos, ppos := ca.peer[l], ca.pos[l], ca.pos[ca.peer[l]]
	prev := -1
	for s := 1; s < M; s++ {
		mine := ca.ring[(pos-s+G)%G]    // what this GPU got in round s
		theirs := ca.ring[(ppos-s+G)%G] // what the peer got in round s
		g.recv(theirs, peer, kindIntra+M-1+s)
		if id := g.send(mine, peer, kindIntra+M-1+s, g.stash[s-1], postAfter, prev); id >= 0 {
			prev = id
		}
	}
}
