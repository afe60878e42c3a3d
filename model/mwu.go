package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/goring-hpc/goring/topo"
)

// NIMBLE's min-congestion planner (seed 002 section IV-B): given a demand
// matrix (bytes GPU i sends GPU j), spread every large demand over several
// paths so that the most loaded link of the cluster carries as little as
// possible.
//
// What the text copy of the paper lost, and how it is rebuilt here:
//
//   - The problem (eqs. 1-5) is the classic min-congestion multi-commodity
//     flow: minimise lambda subject to flow conservation per demand (2-4)
//     and sum_k f_k(e) <= lambda * c(e) on every directed link e (5), here
//     with c(e) the link's bandwidth, so lambda is the busy time of the
//     most loaded link ("capacity-normalized"). PlanMWU reports lambda
//     before (every demand on its default path) and after, in microseconds.
//   - The candidate paths are restricted as the paper says: the direct path;
//     inside a node, one intermediate GPU (2 hops); between nodes, one
//     rail-matched path per rail (NVLink to the GPU that owns rail r, rail
//     r, NVLink from the remote GPU of rail r). Deeper relays are left out
//     (section V-B "Deeper multi-hop paths").
//   - The link cost: the paper replaces Garg-Koenemann's exponential length
//     by "a custom cost function" that grows sharply with load, and takes
//     the MAX over a path's links rather than the sum, because a pipelined
//     multi-hop transfer runs at its bottleneck's rate. We take the link's
//     utilisation after the increment, u(e) = (load(e) + x) / c(e), as the
//     primary cost (max over the path: the bottleneck it would create),
//     clipped from below at (1-Epsilon) times the current maximum over all
//     links: eq. 1 only sees the maximum, so paths that stay well under it
//     are equally good. On a tie the default path wins (a relay costs pipeline setup
//     and relay-GPU memory traffic, section V-B, so NIMBLE only leaves the
//     default path when that lowers the bottleneck; this is also why
//     uniform traffic stays direct). Between other tied paths,
//     Garg-Koenemann's exponential length sum_e exp(k (u(e)/U - 1)), U the
//     current maximum, decides: it prefers the path that loads fewer and
//     emptier links, which is what the exponential weights do in the
//     original algorithm.
//     Any increasing cost of u gives the same max-path choice, so the
//     exponent of the paper's unknown cost only matters for ties.
//   - The increments: the paper routes "a fraction of the remaining
//     workload" per visit of a pair, visiting pairs repeatedly. We move
//     EQUAL increments of Epsilon times the demand, one per demand and
//     round, demands in decreasing size within a round, starting from the
//     default routing (see mwuRoute for why). Equal increments bound what
//     a late greedy choice can cost to one increment (Epsilon of the
//     demand); a geometric sequence front-loads half the demand on
//     whatever path is cheapest first. The hand cases of mwu_test.go
//     converge to within (1 + 2 Epsilon) of the LP optimum.
//   - The size threshold: demands under SplitThresholdBytes (1 MiB, section
//     V-B "Multi-GPU forwarding is disabled for small messages (1 MB or
//     less)") stay on the default path; they are routed first, as fixed
//     background load the split demands balance around.
//   - Hysteresis (section I "hysteresis-based load metrics to avoid
//     oscillations"): with a previous plan, the previous split (as fractions
//     per path) is re-applied to the new demands, and kept unless the new
//     split lowers the max link load by more than HysteresisFraction.

// DefaultSplitThresholdBytes is the demand size under which NIMBLE does not
// split (seed 002 section V-B: forwarding disabled at 1 MB or less).
const DefaultSplitThresholdBytes = 1 << 20

// DefaultMWUEpsilon is the default increment fraction of PlanMWU.
const DefaultMWUEpsilon = 0.02

// MWUOptions configure PlanMWU. The zero value is the paper's policy.
type MWUOptions struct {
	// SplitThresholdBytes: demands smaller than this stay on their default
	// path. 0 means DefaultSplitThresholdBytes; negative splits every
	// demand.
	SplitThresholdBytes int64
	// Epsilon is the increment fraction: a split demand is routed in
	// ceil(1/Epsilon) equal increments. 0 means DefaultMWUEpsilon; it must
	// lie in (0, 1].
	Epsilon float64
	// ElemBytes is the element size: every piece is a whole number of
	// elements and every demand must be one. 0 means 1.
	ElemBytes int
	// Previous, when set, is the plan in use; it is kept (re-applied to the
	// new demands) unless the new split's max link load is lower than
	// (1 - HysteresisFraction) times the previous split's on these demands.
	Previous *MWUPlan
	// HysteresisFraction in [0, 1) (see Previous).
	HysteresisFraction float64
}

// MWUPathKind says what shape a candidate path has.
type MWUPathKind uint8

// Candidate path shapes.
const (
	MWUDirect MWUPathKind = iota // the default route: NVLink/switch, or the source GPU's rail
	MWUTwoHop                    // inside a node, through one intermediate GPU
	MWURail                      // between nodes, rail-matched over rail Rail
)

func (k MWUPathKind) String() string {
	switch k {
	case MWUDirect:
		return "direct"
	case MWUTwoHop:
		return "2hop"
	case MWURail:
		return "rail"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// MWUPath is one candidate path of a demand.
type MWUPath struct {
	Kind MWUPathKind
	// Ranks are the GPUs the bytes visit in order: source, relays,
	// destination (global ranks, block placement).
	Ranks []int
	// Rail is the rail of the inter-node hop, topo.NoRail inside a node.
	Rail int
	// Links are ids into MWUPlan.Links, one per directed link crossed.
	Links []int
	dup   bool // a link occurs twice in Links
}

// Hops is the number of transfers (len(Ranks)-1).
func (p MWUPath) Hops() int { return len(p.Ranks) - 1 }

// MWUDemand is one (source, destination) pair and its split.
type MWUDemand struct {
	Src, Dst int
	Bytes    int64
	// Paths are the candidates; Paths[0] is the default (direct) path. A
	// demand under the split threshold lists only its default path.
	Paths []MWUPath
	// SplitBytes[i] is what Paths[i] carries: whole elements, summing to
	// Bytes. Unsplit demands have everything on Paths[0].
	SplitBytes []int64
}

// Split reports whether the demand uses any path but the default one.
func (d *MWUDemand) Split() bool { return d.SplitBytes[0] != d.Bytes }

// MWULink is one directed link of the planner's network and its load.
type MWULink struct {
	Name         string // "node0 gpu:1->gpu:0", "node1 rail:2 up"
	CapacityGBps float64
	// BeforeBytes is the load with every demand on its default path,
	// AfterBytes with the plan's split.
	BeforeBytes, AfterBytes int64
}

// BusyUS is the time the link needs to move b bytes at full rate.
func (l MWULink) BusyUS(b int64) float64 { return float64(b) / (l.CapacityGBps * 1e3) }

// MWUPlan is PlanMWU's answer.
type MWUPlan struct {
	NRanks int
	// Demands are the nonzero off-diagonal demands in row-major order.
	Demands []MWUDemand
	Links   []MWULink
	// MaxBeforeUS and MaxAfterUS are lambda of eq. 1: the busy time of the
	// most loaded link, before and after; Bottleneck* name that link.
	MaxBeforeUS, MaxAfterUS           float64
	BottleneckBefore, BottleneckAfter string
	// Increments is the number of equal increments per split demand.
	Increments int
	// Kept is true when hysteresis kept Options.Previous's split.
	Kept bool
	at   []int32 // demand index of (src, dst), -1 for none
}

// Demand returns the demand from src to dst, or nil when it is zero.
func (p *MWUPlan) Demand(src, dst int) *MWUDemand {
	if src < 0 || dst < 0 || src >= p.NRanks || dst >= p.NRanks {
		return nil
	}
	if i := p.at[src*p.NRanks+dst]; i >= 0 {
		return &p.Demands[i]
	}
	return nil
}

// PlanMWU splits the demands over candidate paths of t (see the comment
// above DefaultSplitThresholdBytes). demandBytes[i][j] is what rank i sends
// rank j; the diagonal is a local copy and is ignored. The result is
// deterministic.
func PlanMWU(t *topo.Topology, demandBytes [][]int64, o MWUOptions) (*MWUPlan, error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	if t == nil {
		return nil, errors.New("mwu: no topology")
	}
	n := t.NumGPUs()
	if n < 1 {
		return nil, fmt.Errorf("mwu: topology %q has no GPUs", t.Name)
	}
	if len(demandBytes) != n {
		return nil, fmt.Errorf("mwu: demand matrix has %d rows, want %d (one per GPU of %q)", len(demandBytes), n, t.Name)
	}
	e := int64(o.ElemBytes)
	for i, row := range demandBytes {
		if len(row) != n {
			return nil, fmt.Errorf("mwu: demand row %d has %d entries, want %d", i, len(row), n)
		}
		for j, b := range row {
			if b < 0 {
				return nil, fmt.Errorf("mwu: demand[%d][%d] = %d bytes is negative", i, j, b)
			}
			if b%e != 0 {
				return nil, fmt.Errorf("mwu: demand[%d][%d] = %d bytes is not a whole number of %d-byte elements", i, j, b, e)
			}
		}
	}
	if o.Previous != nil && o.Previous.NRanks != n {
		return nil, fmt.Errorf("mwu: previous plan is for %d GPUs, this one has %d", o.Previous.NRanks, n)
	}
	net, err := newMWUNet(t)
	if err != nil {
		return nil, err
	}
	plan := &MWUPlan{NRanks: n, at: make([]int32, n*n)}
	for i := range plan.at {
		plan.at[i] = -1
	}
	for s := range n {
		for d := range n {
			b := demandBytes[s][d]
			if s == d || b == 0 {
				continue
			}
			paths, err := net.candidates(s, d, b >= o.SplitThresholdBytes)
			if err != nil {
				return nil, err
			}
			for i := range paths {
				paths[i].markDup()
			}
			plan.at[s*n+d] = int32(len(plan.Demands))
			plan.Demands = append(plan.Demands, MWUDemand{Src: s, Dst: d, Bytes: b, Paths: paths, SplitBytes: make([]int64, len(paths))})
		}
	}
	plan.Links = make([]MWULink, len(net.names))
	for i := range plan.Links {
		plan.Links[i] = MWULink{Name: net.names[i], CapacityGBps: net.capGBps[i]}
	}
	plan.Increments = int(math.Ceil(1/o.Epsilon - 1e-9))
	thr := o.SplitThresholdBytes
	splits := make([][]int64, len(plan.Demands)) // elements per path
	for i := range plan.Demands {
		splits[i] = make([]int64, len(plan.Demands[i].Paths))
	}
	mwuRoute(plan, splits, thr, e, o.Epsilon)
	setSplits(plan, splits, e)
	before := plan.loads(func(d *MWUDemand) []int64 { return defaultSplit(d) })
	after := plan.loads(func(d *MWUDemand) []int64 { return d.SplitBytes })
	if o.Previous != nil {
		prev := previousSplits(plan, o.Previous, e)
		prevLoad := plan.loads(func(d *MWUDemand) []int64 { return prev[d.Src*n+d.Dst] })
		if plan.maxUS(after) >= (1-o.HysteresisFraction)*plan.maxUS(prevLoad) {
			for i := range plan.Demands {
				d := &plan.Demands[i]
				copy(d.SplitBytes, prev[d.Src*n+d.Dst])
			}
			after, plan.Kept = prevLoad, true
		}
	}
	for i := range plan.Links {
		plan.Links[i].BeforeBytes, plan.Links[i].AfterBytes = before[i], after[i]
	}
	plan.MaxBeforeUS, plan.BottleneckBefore = plan.maxLink(before)
	plan.MaxAfterUS, plan.BottleneckAfter = plan.maxLink(after)
	return plan, nil
}

func (o *MWUOptions) fill() error {
	if o.SplitThresholdBytes == 0 {
		o.SplitThresholdBytes = DefaultSplitThresholdBytes
	}
	if o.Epsilon == 0 {
		o.Epsilon = DefaultMWUEpsilon
	}
	if !(o.Epsilon > 0 && o.Epsilon <= 1) {
		return fmt.Errorf("mwu: epsilon %g: want 0 < epsilon <= 1", o.Epsilon)
	}
	if o.ElemBytes == 0 {
		o.ElemBytes = 1
	}
	if o.ElemBytes < 0 {
		return fmt.Errorf("mwu: element size %d bytes: want a positive size", o.ElemBytes)
	}
	if !(o.HysteresisFraction >= 0 && o.HysteresisFraction < 1) {
		return fmt.Errorf("mwu: hysteresis fraction %g: want 0 <= h < 1", o.HysteresisFraction)
	}
	return nil
}

// mwuTieSharpness is k of the exponential tie-break length.
const mwuTieSharpness = 10

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

func (t *maxTree) set(i int, x float64) {
	i += t.n
	t.v[i] = x
	for i > 1 {
		i /= 2
		t.v[i] = math.Max(t.v[2*i], t.v[2*i+1])
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

// mwuNet is the planner's view of the cluster: every directed link of
// every node (a half-duplex bundle is one link for both directions), plus
// an up and a down port per node and rail when the node does not describe
// its NIC ports as links to "rail:R" (as package sim does).
type mwuNet struct {
	t       *topo.Topology
	names   []string
	capGBps []float64
	ids     [][]int
	ports   map[[3]int]int   // (node, rail, 0 up / 1 down) -> id
	routes  map[[3]int][]int // (node, from, to) -> links; see epName
	hasRail map[[2]int]bool  // (node, rail): the node links "rail:R"
	first   []int            // first rank of node i
	nRails  int
}

func newMWUNet(t *topo.Topology) (*mwuNet, error) {
	nw := &mwuNet{t: t, ports: map[[3]int]int{}, nRails: len(t.Rails), routes: map[[3]int][]int{}, hasRail: map[[2]int]bool{}}
	r := 0
	for ni := range t.Nodes {
		node := &t.Nodes[ni]
		nw.first = append(nw.first, r)
		r += len(node.GPUs)
		ids := make([]int, 2*len(node.Links))
		for li, l := range node.Links {
			if l.BandwidthGBps() <= 0 {
				return nil, fmt.Errorf("mwu: node %d link %s-%s has no bandwidth", ni, l.A, l.B)
			}
			ids[2*li] = nw.add(fmt.Sprintf("node%d %s->%s", ni, l.A, l.B), l.BandwidthGBps())
			if l.FullDuplex {
				ids[2*li+1] = nw.add(fmt.Sprintf("node%d %s->%s", ni, l.B, l.A), l.BandwidthGBps())
			} else {
				ids[2*li+1] = ids[2*li]
			}
		}
		nw.ids = append(nw.ids, ids)
	}
	return nw, nil
}

func (nw *mwuNet) add(name string, gbps float64) int {
	nw.names = append(nw.names, name)
	nw.capGBps = append(nw.capGBps, gbps)
	return len(nw.names) - 1
}

// Endpoints of route as ints: GPU i is i, the port of rail r is -1-r.
func epName(e int) string {
	if e < 0 {
		return topo.RailEndpoint(-1 - e)
	}
	return topo.GPUEndpoint(e)
}

func railEP(r int) int { return -1 - r }

// route is the directed link ids of topo's route from one endpoint of node
// ni to another (cached).
func (nw *mwuNet) route(ni int, from, to int) ([]int, error) {
	key := [3]int{ni, from, to}
	if r, ok := nw.routes[key]; ok {
		return r, nil
	}
	hops, err := nw.t.Nodes[ni].Route(epName(from), epName(to))
	if err != nil {
		return nil, fmt.Errorf("mwu: %w", err)
	}
	r := make([]int, len(hops))
	for i, h := range hops {
		r[i] = nw.ids[ni][2*h.Link]
		if !h.Forward {
			r[i] = nw.ids[ni][2*h.Link+1]
		}
	}
	nw.routes[key] = r
	return r, nil
}

// hop appends to p the links of the route from GPU from to GPU to of node
// ni.
func (nw *mwuNet) hop(p *MWUPath, ni, from, to int) error {
	links, err := nw.route(ni, from, to)
	if err != nil {
		return err
	}
	p.Links = append(p.Links, links...)
	return nil
}

// hasPort reports whether node ni has a link at "rail:R" (cached).
func (nw *mwuNet) hasPort(ni, r int) bool {
	k := [2]int{ni, r}
	if has, ok := nw.hasRail[k]; ok {
		return has
	}
	e := topo.RailEndpoint(r)
	has := false
	for _, l := range nw.t.Nodes[ni].Links {
		has = has || l.A == e || l.B == e
	}
	nw.hasRail[k] = has
	return has
}

// network is the links of a transfer from GPU a of node na to GPU b of node
// nb over rail r, as package sim routes it.
func (nw *mwuNet) network(na, a, nb, b, r int) ([]int, error) {
	rail, ok := nw.t.RailByIndex(r)
	if !ok {
		return nil, fmt.Errorf("mwu: topology %q has no rail %d", nw.t.Name, r)
	}
	if nw.hasPort(na, r) && nw.hasPort(nb, r) {
		up, err := nw.route(na, a, railEP(r))
		if err != nil {
			return nil, err
		}
		down, err := nw.route(nb, railEP(r), b)
		if err != nil {
			return nil, err
		}
		return append(slices.Clone(up), down...), nil
	}
	return []int{nw.port(na, r, 0, rail.BetaGBps), nw.port(nb, r, 1, rail.BetaGBps)}, nil
}

func (nw *mwuNet) port(ni, r, dir int, gbps float64) int {
	k := [3]int{ni, r, dir}
	if id, ok := nw.ports[k]; ok {
		return id
	}
	name := fmt.Sprintf("node%d rail:%d up", ni, r)
	if dir == 1 {
		name = fmt.Sprintf("node%d rail:%d down", ni, r)
	}
	id := nw.add(name, gbps)
	nw.ports[k] = id
	return id
}

func (nw *mwuNet) locate(rank int) (node, local int) {
	node, local, _ = nw.t.Locate(rank)
	return node, local
}

// defaultRail is the rail package sim gives a send without a hint: the
// source GPU's rail, or local % rails for a GPU with none.
func (nw *mwuNet) defaultRail(node, local int) int {
	if r := nw.t.Nodes[node].GPUs[local].Rail; r >= 0 {
		return r
	}
	return nw.t.Rails[local%nw.nRails].Index
}

// owner is the first GPU of node ni on rail r, or -1.
func (nw *mwuNet) owner(ni, r int) int {
	for _, g := range nw.t.Nodes[ni].GPUs {
		if g.Rail == r {
			return g.Index
		}
	}
	return -1
}

// candidates lists the paths of demand s -> d, the default path first;
// only the default path unless all.
func (nw *mwuNet) candidates(s, d int, all bool) ([]MWUPath, error) {
	ns, ls := nw.locate(s)
	nd, ld := nw.locate(d)
	if ns == nd {
		direct, err := nw.route(ns, ls, ld)
		if err != nil {
			return nil, err
		}
		out := []MWUPath{{Kind: MWUDirect, Ranks: []int{s, d}, Rail: topo.NoRail, Links: direct}}
		if !all {
			return out, nil
		}
		for m := range nw.t.Nodes[ns].GPUs {
			if m == ls || m == ld {
				continue
			}
			p := MWUPath{Kind: MWUTwoHop, Ranks: []int{s, nw.first[ns] + m, d}, Rail: topo.NoRail}
			if err := nw.hop(&p, ns, ls, m); err != nil {
				return nil, err
			}
			if err := nw.hop(&p, ns, m, ld); err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, nil
	}
	if nw.nRails == 0 {
		return nil, fmt.Errorf("mwu: topology %q has no rails: GPUs %d and %d cannot talk", nw.t.Name, s, d)
	}
	rs := nw.defaultRail(ns, ls)
	direct, err := nw.network(ns, ls, nd, ld, rs)
	if err != nil {
		return nil, err
	}
	out := []MWUPath{{Kind: MWUDirect, Ranks: []int{s, d}, Rail: rs, Links: direct}}
	if !all {
		return out, nil
	}
	for _, rail := range nw.t.Rails {
		r := rail.Index
		oa, ob := nw.owner(ns, r), nw.owner(nd, r)
		if oa < 0 || ob < 0 {
			continue
		}
		p := MWUPath{Kind: MWURail, Ranks: []int{s}, Rail: r}
		if oa != ls {
			if err := nw.hop(&p, ns, ls, oa); err != nil {
				return nil, err
			}
			p.Ranks = append(p.Ranks, nw.first[ns]+oa)
		}
		net, err := nw.network(ns, oa, nd, ob, r)
		if err != nil {
			return nil, err
		}
		p.Links = append(p.Links, net...)
		if ob != ld {
			if err := nw.hop(&p, nd, ob, ld); err != nil {
				return nil, err
			}
			p.Ranks = append(p.Ranks, nw.first[nd]+ob)
		}
		p.Ranks = append(p.Ranks, d)
		if slices.Equal(p.Links, direct) {
			continue // the default route is already rail-matched on r
		}
		out = append(out, p)
	}
	return out, nil
}
