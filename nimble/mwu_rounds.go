package nimble

import (
	"math"
	"slices"
)

// The multiplicative-weights rounds of PlanMWU and the split bookkeeping
// (see mwu.go for the method).

// mwuRoute fills splits (elements per path). It starts from the default
// routing (the "before" plan) and improves it in rounds: in each round every
// demand at or above the threshold, largest first, takes one increment off
// the path it uses whose bottleneck is highest and puts it back on the
// cheapest path (clipped bottleneck, default on ties, then the exponential
// length). A round in which nothing moves ends the search; at most
// 2*Increments rounds run.
//
// Starting from the default routing rather than from an empty network is
// what keeps balanced traffic where it is: a greedy fill of an empty network
// sees transient imbalances inside a round (rank 0's second inter-node
// demand finds its rail busier than a rail nobody has used yet) and
// scatters demands without lowering the final maximum.
func mwuRoute(plan *MWUPlan, splits [][]int64, thr, e int64, eps float64) {
	capBpUS := make([]float64, len(plan.Links))
	for i, l := range plan.Links {
		capBpUS[i] = l.CapacityGBps * 1e3
	}
	util := newMaxTree(len(plan.Links))
	load := make([]float64, len(plan.Links))
	add := func(p *MWUPath, x float64) {
		for _, l := range p.Links {
			load[l] += x
			util.set(l, load[l]/capBpUS[l])
		}
	}
	var big []int
	for i := range plan.Demands {
		d := &plan.Demands[i]
		splits[i][0] = d.Bytes / e
		add(&d.Paths[0], float64(d.Bytes))
		if d.Bytes >= thr && len(d.Paths) > 1 {
			big = append(big, i)
		}
	}
	// Largest first within a round; ties in row-major order (stable).
	slices.SortStableFunc(big, func(a, b int) int {
		da, db := plan.Demands[a].Bytes, plan.Demands[b].Bytes
		switch {
		case da > db:
			return -1
		case da < db:
			return 1
		}
		return 0
	})
	T := int64(plan.Increments)
	bottleneck := func(p *MWUPath, x float64) float64 {
		m := 0.0
		for j, l := range p.Links {
			m = max(m, (load[l]+x*p.mult(j))/capBpUS[l])
		}
		return m
	}
	// gkLength is Garg-Koenemann's exponential length of p after adding x,
	// relative to ref (> 0: the path carries x > 0).
	gkLength := func(p *MWUPath, x, ref float64) float64 {
		glen := 0.0
		for j, l := range p.Links {
			glen += math.Exp(mwuTieSharpness * ((load[l]+x*p.mult(j))/capBpUS[l]/ref - 1))
		}
		return glen
	}
	for range 2 * T {
		moved := false
		for _, i := range big {
			d := &plan.Demands[i]
			inc := max(d.Bytes/e/T, 1)
			// Take the increment off the used path with the highest
			// bottleneck (a non-default path on ties: bytes drift home).
			from, fromMax := -1, -1.0
			for pi := range d.Paths {
				if splits[i][pi] == 0 {
					continue
				}
				if m := bottleneck(&d.Paths[pi], 0); m > fromMax*(1+1e-12) || (m >= fromMax*(1-1e-12) && pi > 0) {
					from, fromMax = pi, m
				}
			}
			if from == 0 && fromMax <= (1-eps)*util.max() {
				continue // on the default path, well under the maximum: stays
			}
			inc = min(inc, splits[i][from])
			x := float64(inc * e)
			add(&d.Paths[from], -x)
			// Well below the current maximum every path is as good for the
			// objective (eq. 1 only sees the maximum): clip at (1-Epsilon)
			// of it, so the default path wins unless it is near the
			// maximum and another path is not.
			clip := (1 - eps) * util.max()
			best, bestMax, bestLen := 0, math.Inf(1), math.NaN()
			for pi := range d.Paths {
				p := &d.Paths[pi]
				ref := max(clip, bottleneck(p, x))
				switch {
				case ref < bestMax*(1-1e-12):
					bestLen = math.NaN()
				case ref > bestMax*(1+1e-12), best == 0 && pi > 0:
					continue // the default path wins bottleneck ties
				default:
					if math.IsNaN(bestLen) {
						bestLen = gkLength(&d.Paths[best], x, bestMax)
					}
					glen := gkLength(p, x, ref)
					if glen >= bestLen*(1-1e-12) {
						continue
					}
					bestLen = glen
				}
				best, bestMax = pi, ref
			}
			splits[i][from] -= inc
			splits[i][best] += inc
			add(&d.Paths[best], x)
			moved = moved || best != from
		}
		if !moved {
			break
		}
	}
}

// maxTree is a segment tree over link utilisations: set in O(log n), max
// in O(1).
type maxTree struct {
	n int
	v []float64
}

func newMaxTree(n int) *maxTree {
	size := 1
	for size < max(n, 1) {
		size *= 2
	}
	return &maxTree{n: size, v: make([]float64, 2*size)}
}

// set stores x at leaf i and updates its ancestors, stopping where an
// ancestor's maximum does not change. Utilisations are finite, so a plain
// comparison does (math.Max's NaN and signed-zero rules cost a third of
// the planner's time).
func (t *maxTree) set(i int, x float64) {
	i += t.n
	t.v[i] = x
	for i > 1 {
		i /= 2
		a, b := t.v[2*i], t.v[2*i+1]
		m := a
		if b > a {
			m = b
		}
		if t.v[i] == m {
			return
		}
		t.v[i] = m
	}
}

func (t *maxTree) max() float64 { return t.v[1] }

// mult is how often the path crosses Links[j] (twice loads it twice).
func (p *MWUPath) mult(j int) float64 {
	if !p.dup {
		return 1
	}
	c := 0
	for _, l := range p.Links {
		if l == p.Links[j] {
			c++
		}
	}
	return float64(c)
}

// markDup sets p.dup when a link occurs twice in p.Links.
func (p *MWUPath) markDup() {
	for i, l := range p.Links {
		if slices.Contains(p.Links[i+1:], l) {
			p.dup = true
		}
	}
}

func setSplits(plan *MWUPlan, splits [][]int64, e int64) {
	for i := range plan.Demands {
		for p, el := range splits[i] {
			plan.Demands[i].SplitBytes[p] = el * e
		}
	}
}

func defaultSplit(d *MWUDemand) []int64 {
	s := make([]int64, len(d.Paths))
	s[0] = d.Bytes
	return s
}

// previousSplits re-applies prev's split fractions to plan's demands: a
// demand prev also had, with the same candidate paths, is split in the
// same proportions (whole elements, largest remainders); any other demand
// takes its default path.
func previousSplits(plan *MWUPlan, prev *MWUPlan, e int64) map[int][]int64 {
	n := plan.NRanks
	out := make(map[int][]int64, len(plan.Demands))
	for i := range plan.Demands {
		d := &plan.Demands[i]
		key := d.Src*n + d.Dst
		pd := prev.Demand(d.Src, d.Dst)
		if pd == nil || !samePaths(pd.Paths, d.Paths) {
			out[key] = defaultSplit(d)
			continue
		}
		out[key] = scaleSplit(pd.SplitBytes, pd.Bytes, d.Bytes, e)
	}
	return out
}

func samePaths(a, b []MWUPath) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Kind != b[i].Kind || a[i].Rail != b[i].Rail || !slices.Equal(a[i].Ranks, b[i].Ranks) {
			return false
		}
	}
	return true
}

// scaleSplit spreads total bytes (whole elements of e) in the proportions
// of split (which sums to of), giving leftover elements to the largest
// remainders (lowest index on ties).
func scaleSplit(split []int64, of, total, e int64) []int64 {
	elems := total / e
	out := make([]int64, len(split))
	rem := make([]float64, len(split))
	left := elems
	for i, b := range split {
		exact := float64(elems) * float64(b) / float64(of)
		out[i] = int64(math.Floor(exact))
		rem[i] = exact - float64(out[i])
		left -= out[i]
	}
	for ; left > 0; left-- {
		best := 0
		for i := range rem {
			if rem[i] > rem[best] {
				best = i
			}
		}
		out[best]++
		rem[best] = -1
	}
	for i := range out {
		out[i] *= e
	}
	return out
}

// loads sums the bytes every link carries under split(d).
func (p *MWUPlan) loads(split func(d *MWUDemand) []int64) []int64 {
	out := make([]int64, len(p.Links))
	for i := range p.Demands {
		d := &p.Demands[i]
		for pi, b := range split(d) {
			for _, l := range d.Paths[pi].Links {
				out[l] += b
			}
		}
	}
	return out
}

func (p *MWUPlan) maxUS(load []int64) float64 {
	us, _ := p.maxLink(load)
	return us
}

func (p *MWUPlan) maxLink(load []int64) (us float64, name string) {
	for i, l := range p.Links {
		if t := l.BusyUS(load[i]); t > us {
			us, name = t, l.Name
		}
	}
	return us, name
}
