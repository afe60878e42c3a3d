package mpath

import (
	"fmt"
	"sync"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// Planner decides, for each device transfer of a collective between two
// GPUs of one node, how it is carried: nil for one direct copy, else a
// Plan for the push engine (cudaexec.Engine.SetPlanner). It reads a
// calibration (goring calibrate) and never splits what the file did not
// measure: the topology's figures have no contention, and the
// contention-free split lost 21% on the 2xH200 pair (docs/model.md 8.1).
//
// The step's path hint (sched.Path) chooses among what the model allows:
//
//   - PathDirect, PathRail, and a "gpu:N" hint whose N is the source or
//     the destination (a NIMBLE relay hop: the planner already chose that
//     route): one direct copy;
//   - PathAny: the model's split for the step's load (Path.Load, see
//     model.LoadedPaths), the size threshold included;
//   - PathHost, or "gpu:K" with K another GPU: all bytes over that staged
//     path, in the model's chunks, if the pair has it; else direct.
//
// A Planner is safe for concurrent use.
type Planner struct {
	node     *topo.Node
	cal      *calib.Calibration
	o        model.Options
	maxStage int64
	gpus     int
	measured []bool // src*gpus+dst: the file measured the pair or its mirror
	// MinGain is the least predicted gain over the direct copy alone, as
	// a fraction of its time, for which a split is used (DefaultMinGain).
	MinGain float64

	mu        sync.Mutex
	splitters map[model.Load]*model.Splitter
	plans     map[planKey]*Plan
}

type planKey struct {
	src, dst int
	n        int64
	hint     sched.Path
}

// DefaultMinGain: a split predicted to save less than 2% of the direct
// copy's time is not used. Past its optimum the split loses about seven
// times faster than it gains before it (docs/model.md 8.3), GPU copies
// scatter by about 1% from run to run, and the load rule is not measured
// (docs/model.md 8.6): a gain smaller than that is not worth the risk.
const DefaultMinGain = 0.02

// maxCachedPlans bounds the plan cache; a collective has a few sizes and
// loads, so it is cleared rather than evicted piecemeal.
const maxCachedPlans = 4096

// NewPlanner checks that cal describes node (calib.Calibration.CheckNode)
// and that it measured at least one pair; maxStage bounds the staging of
// one (peer, path), as the engine's MaxStage.
func NewPlanner(node *topo.Node, cal *calib.Calibration, o model.Options, maxStage int64) (*Planner, error) {
	if node == nil || cal == nil {
		return nil, fmt.Errorf("mpath: planner needs a node and a calibration")
	}
	if err := cal.CheckNode(node); err != nil {
		return nil, err
	}
	g := len(node.GPUs)
	p := &Planner{node: node, cal: cal, o: o, maxStage: maxStage, gpus: g, measured: make([]bool, g*g), MinGain: DefaultMinGain,
		splitters: map[model.Load]*model.Splitter{}, plans: map[planKey]*Plan{}}
	some := false
	for s := range g {
		for d := range g {
			if s != d && (cal.Measured(s, d) || cal.Measured(d, s)) {
				p.measured[s*g+d] = true
				some = true
			}
		}
	}
	if !some {
		return nil, fmt.Errorf("calibration measured no GPU pair of node %q (%d GPUs)", node.Name, g)
	}
	if _, err := p.splitter(model.Load{}); err != nil {
		return nil, err
	}
	return p, nil
}

// Plan is the plan of n bytes from GPU src to GPU dst of the node for a
// send with hint, or nil for one direct copy.
func (p *Planner) Plan(src, dst int, n int64, hint sched.Path) *Plan {
	if src < 0 || dst < 0 || src >= p.gpus || dst >= p.gpus || src == dst || n <= 0 || !p.measured[src*p.gpus+dst] {
		return nil
	}
	switch hint.Kind {
	case sched.PathAny, sched.PathHost:
	case sched.PathGPU:
		if k := int(hint.Index); k == src || k == dst {
			return nil
		}
	default:
		return nil
	}
	key := planKey{src, dst, n, hint}
	p.mu.Lock()
	defer p.mu.Unlock()
	if pl, ok := p.plans[key]; ok {
		return pl
	}
	pl := p.build(src, dst, n, hint)
	if len(p.plans) >= maxCachedPlans {
		clear(p.plans)
	}
	p.plans[key] = pl
	return pl
}

// LoadOf is the model's Load of a hint's StepLoad (idle when not
// annotated).
func LoadOf(l sched.StepLoad) model.Load {
	return model.Load{Out: int(l.Out), In: int(l.In), Senders: int(l.Senders)}
}

// build solves one transfer. Caller holds p.mu.
func (p *Planner) build(src, dst int, n int64, hint sched.Path) *Plan {
	sp, err := p.splitter(LoadOf(hint.Load))
	if err != nil {
		return nil
	}
	var split model.Split
	if hint.Kind == sched.PathAny {
		if split, err = sp.Split(src, dst, n, model.AllPaths, false); err != nil || split.Used() < 2 {
			return nil
		}
		if split.DirectOnlyUS > 0 && split.PredictedUS > split.DirectOnlyUS*(1-p.MinGain) {
			return nil
		}
	} else {
		want := model.HostName
		if hint.Kind == sched.PathGPU {
			want = model.GPUStagedName(int(hint.Index))
		}
		paths, err := sp.Paths(src, dst)
		if err != nil {
			return nil
		}
		var only []model.Path
		for _, q := range paths {
			if q.Name == want {
				only = append(only, q)
			}
		}
		if len(only) == 0 {
			return nil
		}
		if split, err = model.Solve(only, n, p.o, false); err != nil {
			return nil
		}
	}
	pl, err := Build(split, p.maxStage)
	if err != nil {
		return nil
	}
	return pl
}

// splitter is the splitter for load l: every measured pair (or its
// mirror, the links of a pair being symmetric) with the file's figures as
// one transfer of a step with load l sees them. Caller holds p.mu, or is
// NewPlanner.
func (p *Planner) splitter(l model.Load) (*model.Splitter, error) {
	if l.Idle() {
		l = model.Load{}
	}
	if sp := p.splitters[l]; sp != nil {
		return sp, nil
	}
	sp, err := model.NewSplitter(p.node, p.o)
	if err != nil {
		return nil, err
	}
	for s := range p.gpus {
		for d := range p.gpus {
			if s == d || !p.measured[s*p.gpus+d] {
				continue
			}
			a, b := s, d
			if !p.cal.Measured(s, d) {
				a, b = d, s
			}
			paths, _, err := p.cal.PairPaths(p.node, a, b, p.o)
			if err != nil {
				return nil, err
			}
			if err := sp.SetPaths(s, d, model.LoadedPaths(paths, l)); err != nil {
				return nil, err
			}
		}
	}
	p.splitters[l] = sp
	return sp, nil
}
