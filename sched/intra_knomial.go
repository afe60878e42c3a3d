package sched

// intraKnomial is "Ibcast: K-nomial" of Parallel Rings section III-B with K = 4
// (the paper's choice for every K-nomial collective): every GPU broadcasts
// its block over a 4-nomial tree. Virtual ranks are rotated (v = (x - root)
// mod G); in round r (distance 4^r) every GPU that has the block and whose
// virtual rank is below 4^r sends it to v + a*4^r for a = 1, 2, 3. With four
// GPUs the root sends to all three others at once, the same pattern as Ibcast
// Linear (Table I discussion).
type intraKnomial struct{}

const knomialRadix = 4

func (intraKnomial) early(g *intraGroup) {
	G := g.run.sh.gpus
	for j := 0; j < G; j++ {
		bcastTree(g, knomialTree{}, j)
	}
}

func (intraKnomial) late(*intraGroup, int) {}

type knomialTree struct{}

func (knomialTree) vrank(x, root, G int) int { return (x - root + G) % G }
func (knomialTree) rank(v, root, G int) int  { return (v + root) % G }

// parent of v = a*d + rest (d the largest power of 4 <= v) is rest.
func (knomialTree) parent(v, G int) int {
	d := 1
	for d*knomialRadix <= v {
		d *= knomialRadix
	}
	return v % d
}

// children of v in its r-th sending round: v + a*d, a = 1..3, for the r-th
// power of 4 above v's own digit (1, 4, 16, ... for the root).
func (knomialTree) children(dst []int, v, r, G int) ([]int, bool) {
	d := 1
	for d <= v {
		d *= knomialRadix
	}
	for ; r > 0; r-- {
		d *= knomialRadix
	}
	if v+d >= G {
		return dst, false
	}
	for a := 1; a < knomialRadix && v+a*d < G; a++ {
		dst = append(dst, v+a*d)
	}
	return dst, true
}
