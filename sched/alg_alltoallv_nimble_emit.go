package sched

import "github.com/goring-hpc/goring/nimble"

// Emitting a nimble plan (alg_alltoallv_nimble.go): the relay slots, the
// hops of every chunk, their tags, path hints and ordering.

// Relay pools (see the comment of alg_alltoallv_nimble.go: two pools keep
// slot reuse from deadlocking).
const (
	nimblePoolFirst = iota
	nimblePoolLast
	nimblePools
)

// nimbleRun emits a nimble plan in two passes over its chunks: countSlots
// sizes every relay pool, emit adds every hop. Both passes see the chunks
// in the same global order, so every rank computes the same slots and tags
// alone.
type nimbleRun struct {
	spec    *Spec
	plan    *Plan
	only    int       // the one rank to emit, or -1 for all
	sd, rd  [][]int64 // send and receive displacements of every rank
	slotLen [][nimblePools]int64
	slots   [][nimblePools]int64 // slots per relay pool
	used    [][nimblePools]int64 // chunks through each pool so far
	hz      []*Hazards
	tags    []int32 // next tag per (sender, receiver)
	chain   nimbleChain
	refs    []Ref // where the current chunk sits at each rank of its path
}

func newNimbleRun(spec *Spec, plan *Plan, only int) *nimbleRun {
	n := plan.NRanks
	b := &nimbleRun{spec: spec, plan: plan, only: only,
		sd: make([][]int64, n), rd: make([][]int64, n),
		slotLen: make([][nimblePools]int64, n), slots: make([][nimblePools]int64, n),
		used: make([][nimblePools]int64, n), hz: make([]*Hazards, n),
		tags: make([]int32, n*n), chain: nimbleChain{}, refs: make([]Ref, 0, 4)}
	for r := range n {
		b.sd[r], b.rd[r] = AlltoallvDispls(spec.Counts, r)
	}
	return b
}

func (b *nimbleRun) mine(r int) bool { return b.only < 0 || r == b.only }

// countSlots is pass 1 for chunk c: every relay pool on its path grows to
// its largest chunk and, up to nimbleRelaySlots, one slot per chunk.
func (b *nimbleRun) countSlots(c nimbleChunk) {
	for i, m := range c.path.Ranks[1 : len(c.path.Ranks)-1] {
		pool := nimblePool(c.path, i+1)
		b.slotLen[m][pool] = max(b.slotLen[m][pool], c.len)
		b.slots[m][pool] = min(b.slots[m][pool]+1, nimbleRelaySlots)
	}
}

// startPrograms sizes the programs emitted (scratch: the relay pools, pool
// "first" before pool "last") and adds each rank's copy of its own block.
func (b *nimbleRun) startPrograms() {
	n := b.plan.NRanks
	for r := range n {
		if !b.mine(r) {
			continue
		}
		prog := &b.plan.Ranks[r]
		var scratch int64
		for pool := range nimblePools {
			scratch += b.slotLen[r][pool] * b.slots[r][pool]
		}
		prog.Sizes = Sizes{Src: b.sd[r][n], Dst: b.rd[r][n], Scratch: scratch}
		b.hz[r] = NewHazards(prog)
		if c := b.spec.Counts[r][r]; c > 0 {
			b.hz[r].Copy(At(BufSrc, b.sd[r][r]), At(BufDst, b.rd[r][r]), c)
		}
	}
}

// emit is pass 2 for chunk c: the send and the recv of every hop.
func (b *nimbleRun) emit(c nimbleChunk) {
	b.place(c)
	for h := range len(c.path.Ranks) - 1 {
		b.hop(c, h)
	}
}

// place sets refs to where chunk c sits at each rank of its path: its
// source's src, the next slot of each relay pool on the way, its
// destination's dst.
func (b *nimbleRun) place(c nimbleChunk) {
	ranks := c.path.Ranks
	b.refs = append(b.refs[:0], At(BufSrc, b.sd[c.src][c.dst]+c.off))
	for i, m := range ranks[1 : len(ranks)-1] {
		pool := nimblePool(c.path, i+1)
		slot := b.used[m][pool] % b.slots[m][pool]
		b.used[m][pool]++
		base := int64(0)
		if pool == nimblePoolLast {
			base = b.slotLen[m][nimblePoolFirst] * b.slots[m][nimblePoolFirst]
		}
		b.refs = append(b.refs, At(BufScratch, base+slot*b.slotLen[m][pool]))
	}
	b.refs = append(b.refs, At(BufDst, b.rd[c.dst][c.src]+c.off))
}

// hop emits hop h of chunk c: the send on its sender and the recv on its
// receiver, whichever are emitted. A relay's sends and recvs of one pool
// and peer are chained (nimbleChain).
func (b *nimbleRun) hop(c nimbleChunk, h int) {
	ranks := c.path.Ranks
	n := b.plan.NRanks
	from, to := ranks[h], ranks[h+1]
	tag := int(b.tags[from*n+to])
	b.tags[from*n+to]++
	if b.mine(from) {
		after := -1
		if h > 0 {
			after = b.chain.prev(from, nimblePool(c.path, h), to, 0)
		}
		id := b.hz[from].Send(to, tag, b.refs[h], c.len, nimbleHint(b.plan, c.path, h), after)
		if h > 0 {
			b.chain.set(from, nimblePool(c.path, h), to, 0, id)
		}
	}
	if b.mine(to) {
		relay := h+1 < len(ranks)-1
		after := -1
		if relay {
			after = b.chain.prev(to, nimblePool(c.path, h+1), from, 1)
		}
		id := b.hz[to].Recv(from, tag, b.refs[h+1], c.len, after)
		if relay {
			b.chain.set(to, nimblePool(c.path, h+1), from, 1, id)
		}
	}
}

// nimbleChain remembers a relay's last recv from each sender and last send
// to each receiver per pool, so that the chunks of one lane go in order:
// with every chunk of a lane in flight at once, a relay's slots would fill
// together, drain together and leave each link idle half the time; in
// order, chunk c+1 arrives while chunk c leaves.
type nimbleChain map[[4]int]int

// prev is the step last set for (rank, pool, peer, dir), -1 if none.
func (ch nimbleChain) prev(rank, pool, peer, dir int) int {
	if id, ok := ch[[4]int{rank, pool, peer, dir}]; ok {
		return id
	}
	return -1
}

func (ch nimbleChain) set(rank, pool, peer, dir, id int) { ch[[4]int{rank, pool, peer, dir}] = id }

// nimblePool is the pool of the relay at position i (0 < i < hops) of p.
func nimblePool(p *nimble.MWUPath, i int) int {
	if i+1 == len(p.Ranks)-1 {
		return nimblePoolLast
	}
	return nimblePoolFirst
}

// nimbleHint is the path hint of hop h of p: "rail:R" across nodes,
// "gpu:N" into or out of intra-node relay N, "direct" otherwise.
func nimbleHint(plan *Plan, p *nimble.MWUPath, h int) Path {
	from, to := p.Ranks[h], p.Ranks[h+1]
	if plan.Ranks[from].Node != plan.Ranks[to].Node {
		return Path{Kind: PathRail, Index: uint8(p.Rail)}
	}
	switch {
	case h > 0:
		return Path{Kind: PathGPU, Index: uint8(plan.Ranks[from].Local)}
	case h+1 < len(p.Ranks)-1:
		return Path{Kind: PathGPU, Index: uint8(plan.Ranks[to].Local)}
	}
	return Path{Kind: PathDirect}
}
