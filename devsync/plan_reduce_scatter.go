package devsync

// reduceScatter by loads: the input is Ranks blocks of Count elements;
// rank r's output is block r reduced over ranks. Block b of rank r
//
//  1. copies part b of every input block into its own slot;
//  2. signals phase 0 to every peer, and waits for every peer's phase 0;
//  3. reduces part b of block r of every rank's slot, rank 0 first, into
//     its output.
//
// Reuse: as one-shot allreduce.
func (p planner) reduceScatter() []Step {
	var steps []Step
	for q := range p.s.Ranks {
		off, n := p.part(q*p.s.Count, p.s.Count)
		steps = append(steps, p.move([]Region{{Input, p.me, off, n}}, Region{Slot, p.me, off, n}))
	}
	off, n := p.part(p.me*p.s.Count, p.s.Count)
	out, _ := p.part(0, p.s.Count)
	return append(steps,
		p.signal(0, p.others()),
		p.wait(0, p.others()),
		p.move(p.slotsInRankOrder(off, n), Region{Output, p.me, out, n}),
	)
}
