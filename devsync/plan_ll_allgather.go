package devsync

// llAllgather: the allgather by stores in tagged lines (ll.go). Block b
// of rank r
//
//  1. stores part b of its input, as lines, into region r of every peer's
//     LL area, and into block r of its output (one read of the input);
//  2. copies part b of each peer q's block from region q of its own LL
//     area, once every line there holds the call's tag, into block q of
//     its output.
//
// Reuse: ll.go.
func (p planner) llAllgather() []Step {
	in, n := p.part(0, p.s.Count)
	dsts := []Region{{Output, p.me, p.me*p.s.Count + in, n}}
	for _, q := range p.others() {
		dsts = append(dsts, p.llRegion(q, p.me, in, n))
	}
	steps := []Step{p.move([]Region{{Input, p.me, in, n}}, dsts...)}
	for _, q := range p.others() {
		steps = append(steps, p.move([]Region{p.llRegion(p.me, q, in, n)}, Region{Output, p.me, q*p.s.Count + in, n}))
	}
	return steps
}
