package devsync

// allgather by stores: rank r's input goes to block r of every rank's
// slot. Block b of rank r
//
//  1. stores part b of its input into block r of every rank's slot (its
//     own included), one read of the input for all the stores;
//  2. signals phase 0 to every peer, and waits for every peer's phase 0;
//  3. copies part b of every block of its own slot into its output.
//
// Reuse: rank r stores into peer q's slot again at call e+2; its wait of
// call e+1 phase 0 proves q finished step 3 of call e.
func (p planner) allgather() []Step {
	in, n := p.part(0, p.s.Count)
	dsts := make([]Region, p.s.Ranks)
	for q := range dsts {
		dsts[q] = Region{Slot, q, p.me*p.s.Count + in, n}
	}
	steps := []Step{
		p.move([]Region{{Input, p.me, in, n}}, dsts...),
		p.signal(0, p.others()),
		p.wait(0, p.others()),
	}
	for q := range p.s.Ranks {
		off := q*p.s.Count + in
		steps = append(steps, p.move([]Region{{Slot, p.me, off, n}}, Region{Output, p.me, off, n}))
	}
	return steps
}
