package devsync

// llReduceScatter: the reduce_scatter by stores in tagged lines (ll.go).
// Block b of rank r
//
//  1. stores part b of its input block q, as lines, into region r of rank
//     q's LL area, for every peer q;
//  2. reduces part b of block r, rank 0 first: its own from its input,
//     each peer's from region q of its own LL area once every line there
//     holds the call's tag; into its output.
//
// Reuse: ll.go.
func (p planner) llReduceScatter() []Step {
	var steps []Step
	off, n := p.part(0, p.s.Count)
	in := p.s.BlockStride()
	for _, q := range p.others() {
		steps = append(steps, p.move([]Region{{Input, p.me, q*in + off, n}}, p.llRegion(q, p.me, off, n)))
	}
	srcs := make([]Region, p.s.Ranks)
	for q := range srcs {
		srcs[q] = p.llRegion(p.me, q, off, n)
	}
	srcs[p.me] = Region{Input, p.me, p.me*in + off, n}
	return append(steps, p.move(srcs, Region{Output, p.me, off, n}))
}
