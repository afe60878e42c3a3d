package devsync

// bcast by stores from Root. The readers never signal the root in the
// data round, so the root learns that a slot is free from a ready round:
//
//   - every other rank signals phase 0 ("ready for call e": it finished
//     call e-1) to the root, waits for the root's phase 1, and copies part
//     b of its own slot into its output;
//   - the root waits for every rank's phase 0, stores part b of its input
//     into every other rank's slot and into its own output, and signals
//     phase 1 to every other rank.
func (p planner) bcast() []Step {
	off, n := p.part(0, p.s.Count)
	root := p.s.Root
	if p.me != root {
		return []Step{
			p.signal(0, []int{root}),
			p.wait(1, []int{root}),
			p.move([]Region{{Slot, p.me, off, n}}, Region{Output, p.me, off, n}),
		}
	}
	dsts := []Region{{Output, p.me, off, n}}
	for _, q := range p.others() {
		dsts = append(dsts, Region{Slot, q, off, n})
	}
	return []Step{
		p.wait(0, p.others()),
		p.move([]Region{{Input, p.me, off, n}}, dsts...),
		p.signal(1, p.others()),
	}
}
