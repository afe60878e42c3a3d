package devsync

// twoShotAllreduce: the count elements are cut into Ranks chunks (Part,
// vector-aligned), and each chunk into Blocks parts. Block b of rank r
//
//  1. copies part b of every peer's chunk of its input into its own slot
//     (chunk r is not staged: only rank r reads it, in step 3, from its
//     input);
//  2. signals phase 0 to every peer, and waits for every peer's phase 0;
//  3. reduce-scatter by loads: reduces part b of chunk r of every rank's
//     slot, its own input in its own place, rank 0 first, into its own
//     slot (peers read chunk r of it only after phase 1) and into its
//     output;
//  4. signals phase 1, and waits for every peer's phase 1;
//  5. allgather by loads: copies part b of chunk q from rank q's slot
//     into its output, for every peer q.
//
// Reuse: as one-shot, through the wait of call e+1 phase 0 (which every
// peer signals after its step 5 of call e): rank r stores into chunks of
// its slot again in steps 1 and 3 of call e+2, after that wait.
func (p planner) twoShotAllreduce() []Step {
	chunk := func(q int) (int, int) {
		o, n := Part(p.s.Count, p.s.Ranks, q, p.vec)
		return p.part(o, n)
	}
	var steps []Step
	for _, q := range p.others() {
		off, n := chunk(q)
		steps = append(steps, p.move([]Region{{Input, p.me, off, n}}, Region{Slot, p.me, off, n}))
	}
	off, n := chunk(p.me)
	srcs := p.slotsInRankOrder(off, n)
	srcs[p.me] = Region{Input, p.me, off, n}
	steps = append(steps,
		p.signal(0, p.others()),
		p.wait(0, p.others()),
		p.move(srcs, Region{Slot, p.me, off, n}, Region{Output, p.me, off, n}),
		p.signal(1, p.others()),
		p.wait(1, p.others()),
	)
	for _, q := range p.others() {
		off, n := chunk(q)
		steps = append(steps, p.move([]Region{{Slot, q, off, n}}, Region{Output, p.me, off, n}))
	}
	return steps
}
