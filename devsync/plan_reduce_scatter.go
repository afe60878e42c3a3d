package devsync

// reduceScatter by loads: the input is Ranks blocks of Count elements;
// rank r's output is block r reduced over ranks. Block b of rank r
//
//  1. copies part b of every peer's input block into its own slot (block
//     r is not staged: only rank r reads it, in step 3, from its input);
//  2. signals phase 0 to every peer, and waits for every peer's phase 0;
//  3. reduces part b of block r of every rank's slot, its own input in
//     its own place, rank 0 first, into its output.
//
// Reuse: as one-shot allreduce.
func (p planner) reduceScatter() []Step {
	var steps []Step
	for _, q := range p.others() {
		off, n := p.part(q*p.s.Count, p.s.Count)
		steps = append(steps, p.move([]Region{{Input, p.me, off, n}}, Region{Slot, p.me, off, n}))
	}
	off, n := p.part(p.me*p.s.Count, p.s.Count)
	out, _ := p.part(0, p.s.Count)
	srcs := p.slotsInRankOrder(off, n)
	srcs[p.me] = Region{Input, p.me, off, n}
	return append(steps,
		p.signal(0, p.others()),
		p.wait(0, p.others()),
		p.move(srcs, Region{Output, p.me, out, n}),
	)
}
