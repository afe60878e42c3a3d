package sched

// intraBTDD is "Ibcast: BTDD" of Parallel Rings Table I: every GPU broadcasts its
// block to the others of the node over a binomial tree whose distance
// doubles each step (1, 2, 4, ...), all G broadcasts at once. Virtual ranks
// swap the root with GPU 0 and leave the rest in place (Open MPI libnbc's
// RANK2VRANK); that reproduces the table's pairs: root 2 sends to 1 first,
// then 2->0 and 1->3, so step 1 has incast at GPU 1 as the text says. For
// root 1 the table's first step (1->0) matches; its step-2 transfers (1->2
// and 0->3) are the two the table leaves out: the 1->3 rows it prints in step
// 2 are GPU 1 forwarding root 0's and root 2's blocks. docs/reproductions.md
// section 1 goes through the table cell by cell.
type intraBTDD struct{}

func (intraBTDD) early(g *intraGroup) {
	G := g.run.sh.gpus
	for j := 0; j < G; j++ {
		bcastTree(g, btddTree{}, j)
	}
}

func (intraBTDD) late(*intraGroup, int) {}

type btddTree struct{}

func (btddTree) vrank(x, root, G int) int {
	switch x {
	case root:
		return 0
	case 0:
		return root
	}
	return x
}

func (t btddTree) rank(v, root, G int) int { return t.vrank(v, root, G) }

// parent of v clears v's highest set bit: v got the block in the step whose
// distance is that bit.
func (btddTree) parent(v, G int) int { return v - highBit(v) }

// children of v in its r-th sending round: v + d for the distances d > v's
// highest bit (v sends once it has the block), 1, 2, 4, ... for the root.
func (btddTree) children(dst []int, v, r, G int) ([]int, bool) {
	d := 1
	if v > 0 {
		d = 2 * highBit(v)
	}
	d <<= r
	if v+d >= G {
		return dst, false
	}
	return append(dst, v+d), true
}

// highBit is the largest power of two <= v (v > 0).
func highBit(v int) int {
	h := 1
	for h*2 <= v {
		h *= 2
	}
	return h
}
