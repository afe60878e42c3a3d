package devsync

// llOneShotAllreduce: the one-shot allreduce in tagged lines (ll.go).
// Block b of rank r
//
//  1. stores part b of its input, as lines, into region r of every peer's
//     LL area;
//  2. reduces part b of every rank's vector, rank 0 first: its own from
//     its input, each peer's from region q of its own LL area once every
//     line there holds the call's tag; into its output.
//
// Reuse: ll.go. Nothing is staged and nothing is read over NVLink: each
// byte crosses once, stored by its owner.
func (p planner) llOneShotAllreduce() []Step {
	off, n := p.part(0, p.s.Count)
	var dsts []Region
	for _, q := range p.others() {
		dsts = append(dsts, p.llRegion(q, p.me, off, n))
	}
	srcs := make([]Region, p.s.Ranks)
	for q := range srcs {
		srcs[q] = p.llRegion(p.me, q, off, n)
	}
	srcs[p.me] = Region{Input, p.me, off, n}
	return []Step{
		p.move([]Region{{Input, p.me, off, n}}, dsts...),
		p.move(srcs, Region{Output, p.me, off, n}),
	}
}
