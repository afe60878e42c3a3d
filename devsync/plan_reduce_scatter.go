package devsync

// reduceScatter by stores: the input is Ranks blocks of Count elements
// (BlockStride apart); rank r's output is block r reduced over ranks.
// Rank q's slot holds, at element offset p*Count, rank p's contribution
// to block q. Block b of rank r
//
//  1. stores part b of its input block q into rank q's slot at r*Count,
//     for every peer q (its own block r it reads from its input);
//  2. signals phase 0 to every peer, and waits for every peer's phase 0;
//  3. reduces part b of block r: its slot's piece of every peer, its own
//     input in its own place, rank 0 first, into its output.
//
// Nothing is staged: every byte crosses NVLink once, stored by its owner
// straight from the input, and the reduction reads local memory only. (A
// plan by loads needs the peers' pieces copied into the owner's slot
// first: a local copy of (Ranks-1)/Ranks of the input.)
//
// Reuse: rank r stores into rank q's slot again at call e+2, after its
// wait of call e+1 phase 0, which q signals only after step 3 of call e
// (q runs its calls in order).
func (p planner) reduceScatter() []Step {
	var steps []Step
	off, n := p.part(0, p.s.Count)
	in := p.s.BlockStride()
	for _, q := range p.others() {
		steps = append(steps, p.move([]Region{{Input, p.me, q*in + off, n}}, Region{Slot, q, p.me*p.s.Count + off, n}))
	}
	srcs := make([]Region, p.s.Ranks)
	for q := range srcs {
		srcs[q] = Region{Slot, p.me, q*p.s.Count + off, n}
	}
	srcs[p.me] = Region{Input, p.me, p.me*in + off, n}
	return append(steps,
		p.signal(0, p.others()),
		p.wait(0, p.others()),
		p.move(srcs, Region{Output, p.me, off, n}),
	)
}
