package devsync

// oneShotAllreduce: block b of rank r
//
//  1. copies its part of the input into its own slot;
//  2. signals phase 0 to every peer, and waits for every peer's phase 0;
//  3. reduces that part of every rank's slot, rank 0 first, into its
//     output.
//
// Reuse: a rank rewrites this slot at call e+2; its wait of call e+1
// phase 0 proves every peer finished reading it in call e.
func (p planner) oneShotAllreduce() []Step {
	off, n := p.part(0, p.s.Count)
	return []Step{
		p.move([]Region{{Input, p.me, off, n}}, Region{Slot, p.me, off, n}),
		p.signal(0, p.others()),
		p.wait(0, p.others()),
		p.move(p.slotsInRankOrder(off, n), Region{Output, p.me, off, n}),
	}
}
