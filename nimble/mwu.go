package nimble

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// NIMBLE's min-congestion planner (NIMBLE section IV-B): given a demand
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
// split (NIMBLE section V-B: forwarding disabled at 1 MB or less).
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
	pl, err := NewPlanner(t)
	if err != nil {
		return nil, err
	}
	return pl.Plan(demandBytes, o)
}

// Planner is PlanMWU for one topology: what does not depend on the demands
// (the planner's network, the routes, each pair's candidate paths once a
// demand needed them) is kept, so a caller that plans each MoE layer or
// each iteration pays only for the multiplicative weights. A Planner is
// not safe for concurrent use; the plans it returns share their Paths
// (read them, do not change them).
type Planner struct {
	t     *topo.Topology
	net   *mwuNet
	paths [][2][]MWUPath // [s*n+d]: [0] the default path, [1] all candidates; nil until needed
}

// NewPlanner builds the planner's network of t. Every NIC port the
// network may need is made here, in node and rail order, so link ids do
// not depend on which demands a Planner has seen.
func NewPlanner(t *topo.Topology) (*Planner, error) {
	if t == nil {
		return nil, errors.New("mwu: no topology")
	}
	n := t.NumGPUs()
	if n < 1 {
		return nil, fmt.Errorf("mwu: topology %q has no GPUs", t.Name)
	}
	net, err := newMWUNet(t)
	if err != nil {
		return nil, err
	}
	for ni := range t.Nodes {
		for _, rail := range t.Rails {
			if !net.hasPort(ni, rail.Index) {
				net.port(ni, rail.Index, 0, rail.BetaGBps)
				net.port(ni, rail.Index, 1, rail.BetaGBps)
			}
		}
	}
	return &Planner{t: t, net: net, paths: make([][2][]MWUPath, n*n)}, nil
}

// candidates returns the cached paths of s -> d (all of them, or the
// default one only).
func (pl *Planner) candidates(s, d int, all bool) ([]MWUPath, error) {
	k := 0
	if all {
		k = 1
	}
	c := &pl.paths[s*pl.t.NumGPUs()+d][k]
	if *c == nil {
		paths, err := pl.net.candidates(s, d, all)
		if err != nil {
			return nil, err
		}
		for i := range paths {
			paths[i].markDup()
		}
		*c = paths
	}
	return *c, nil
}

// Plan is PlanMWU on the planner's topology.
func (pl *Planner) Plan(demandBytes [][]int64, o MWUOptions) (*MWUPlan, error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	t, net := pl.t, pl.net
	n := t.NumGPUs()
	e := int64(o.ElemBytes)
	if err := coll.CheckMatrix(demandBytes, n, e); err != nil {
		return nil, fmt.Errorf("mwu: demand matrix of the GPUs of %q: %w", t.Name, err)
	}
	if o.Previous != nil && o.Previous.NRanks != n {
		return nil, fmt.Errorf("mwu: previous plan is for %d GPUs, this one has %d", o.Previous.NRanks, n)
	}
	plan := &MWUPlan{NRanks: n, at: make([]int32, n*n)}
	for i := range plan.at {
		plan.at[i] = -1
	}
	nd := 0
	for s := range n {
		for d := range n {
			if s != d && demandBytes[s][d] != 0 {
				nd++
			}
		}
	}
	plan.Demands = make([]MWUDemand, 0, nd)
	for s := range n {
		for d := range n {
			b := demandBytes[s][d]
			if s == d || b == 0 {
				continue
			}
			paths, err := pl.candidates(s, d, b >= o.SplitThresholdBytes)
			if err != nil {
				return nil, err
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
