package sched

// The broadcast trees of the Ibcast intra-node algorithms (btdd, btddh,
// knomial): every GPU of a node broadcasts its block to the others over a
// tree rooted at it, all G broadcasts at once.

// treeShape is a broadcast tree given in virtual ranks: vrank maps a local
// index to its virtual rank (and, being used both ways, must be an
// involution or come with rank), parent gives a virtual rank's parent, and
// children(v, round) its children of a round.
type treeShape interface {
	vrank(x, root, G int) int
	rank(v, root, G int) int
	parent(v, G int) int
	// children appends v's children of its r-th sending round to dst and
	// reports whether there was such a round.
	children(dst []int, v, r, G int) ([]int, bool)
}

// bcastTree emits this GPU's part of the broadcast of root's block over t.
// Sends of one round go out together; a later round's sends wait for the
// earlier round's (the steps of Parallel Rings Table I).
func bcastTree(g *intraGroup, t treeShape, root int) {
	G, l := g.run.sh.gpus, g.run.p.Local
	kind := kindIntra + root
	v := t.vrank(l, root, G)
	have := g.ready
	if v != 0 {
		have = g.recv(root, t.rank(t.parent(v, G), root, G), kind)
	}
	var prevBuf, curBuf [8]int
	prev := prevBuf[:0]
	var kids [8]int
	for r := 0; ; r++ {
		ch, ok := t.children(kids[:0], v, r, G)
		if !ok {
			break
		}
		cur := curBuf[:0]
		for _, cv := range ch {
			var deps [9]int
			d := append(deps[:0], have)
			d = append(d, prev...)
			if id := g.send(root, t.rank(cv, root, G), kind, d...); id >= 0 {
				cur = append(cur, id)
			}
		}
		if len(cur) > 0 {
			prevBuf, curBuf = curBuf, prevBuf
			prev = prevBuf[:len(cur)]
		}
	}
}
