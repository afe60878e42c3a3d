package sched

// intraBTDDH is "Ibcast: BTDDH" of Parallel Rings Table I, the binomial tree with
// distance halving: every GPU broadcasts its block over a binomial tree whose
// first step spans the largest power-of-two distance below G and halves each
// step. Virtual ranks are rotated (v = (x - root) mod G), which reproduces
// the table: step 1 is 0->2, 1->3, 2->0, 3->1 (congestion-free across the
// sockets of a 4-GPU node), step 2 is 0->1 and 2->3 for root 0, 1->2 and
// 3->0 for root 1, and so on.
type intraBTDDH struct{}

func (intraBTDDH) early(g *intraGroup) {
	G := g.run.sh.gpus
	for j := 0; j < G; j++ {
		bcastTree(g, btddhTree{}, j)
	}
}

func (intraBTDDH) late(*intraGroup, int) {}

type btddhTree struct{}

func (btddhTree) vrank(x, root, G int) int { return (x - root + G) % G }
func (btddhTree) rank(v, root, G int) int  { return (v + root) % G }

// parent of v clears its lowest set bit: v got the block in the step whose
// distance is that bit.
func (btddhTree) parent(v, G int) int { return v - v&-v }

// children of v in its r-th sending round: v + d for the distances d below
// v's lowest set bit (all distances below G for the root), largest first.
func (btddhTree) children(dst []int, v, r, G int) ([]int, bool) {
	d := 0
	switch {
	case v > 0:
		d = (v & -v) / 2
	case G >= 2:
		d = highBit(G - 1)
	}
	d >>= r
	if d == 0 {
		return dst, false
	}
	if v+d < G { // a round whose child falls outside the node stays empty
		dst = append(dst, v+d)
	}
	return dst, true
}
