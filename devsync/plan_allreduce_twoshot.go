package devsync

// twoShotAllreduce: the count elements are cut into Ranks chunks (Part,
// vector-aligned; ChunkStride apart), and each chunk into Blocks parts.
// Rank q's slot has Ranks regions of ChunkStride elements: region p holds
// rank p's piece of chunk q, and region q the reduced chunk q. Block b of
// rank r
//
//  1. reduce-scatter by stores: stores part b of chunk q of its input
//     into region r of rank q's slot, for every peer q (its own chunk r it
//     reads from its input);
//  2. signals phase 0 to every peer, and waits for every peer's phase 0;
//  3. reduces part b of chunk r: its slot's region of every peer, its own
//     input in its own place, rank 0 first, into region r of its own
//     slot (peers read it only after phase 1) and into its output;
//  4. signals phase 1, and waits for every peer's phase 1;
//  5. allgather by loads: copies part b of region q of rank q's slot (the
//     reduced chunk q) into its output, for every peer q.
//
// Nothing is staged: step 1 stores each piece straight from the input
// (a plan by loads first copies the peers' chunks into the own slot).
//
// Reuse: rank r stores into rank q's slot again in steps 1 and 3 of call
// e+2, after its wait of call e+1 phase 0, which every peer signals only
// after its steps 3 and 5 of call e (each rank runs its calls in order).
func (p planner) twoShotAllreduce() []Step {
	stride := ChunkStride(p.s.Count, p.s.Ranks, p.vec)
	// chunk is part b of chunk q: its element offset in the vector and
	// in a region, and its length.
	chunk := func(q int) (int, int, int) {
		o, n := Part(p.s.Count, p.s.Ranks, q, p.vec)
		po, pn := p.part(0, n)
		return o + po, po, pn
	}
	var steps []Step
	for _, q := range p.others() {
		off, in, n := chunk(q)
		steps = append(steps, p.move([]Region{{Input, p.me, off, n}}, Region{Slot, q, p.me*stride + in, n}))
	}
	off, in, n := chunk(p.me)
	srcs := make([]Region, p.s.Ranks)
	for q := range srcs {
		srcs[q] = Region{Slot, p.me, q*stride + in, n}
	}
	srcs[p.me] = Region{Input, p.me, off, n}
	steps = append(steps,
		p.signal(0, p.others()),
		p.wait(0, p.others()),
		p.move(srcs, Region{Slot, p.me, p.me*stride + in, n}, Region{Output, p.me, off, n}),
		p.signal(1, p.others()),
		p.wait(1, p.others()),
	)
	for _, q := range p.others() {
		off, in, n := chunk(q)
		steps = append(steps, p.move([]Region{{Slot, q, q*stride + in, n}}, Region{Output, p.me, off, n}))
	}
	return steps
}
