package pushplan

import (
	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/mpath"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// Planners are the planners of every node of a topology from one
// calibration, as a job whose ranks span the topology keeps them (goring
// bench COLL --calibration): each rank's engine plans with its node's.
type Planners struct {
	tp    *topo.Topology
	nodes []*mpath.Planner // by node
}

// TopologyPlanners is NodePlanner for every node of tp (gpuModel and
// maxStage as there); the first node cal does not fit is the error.
func TopologyPlanners(tp *topo.Topology, cal *calib.Calibration, gpuModel string, maxStage int64) (*Planners, error) {
	p := &Planners{tp: tp, nodes: make([]*mpath.Planner, len(tp.Nodes))}
	for i := range tp.Nodes {
		pl, err := NodePlanner(tp.Nodes[i], cal, gpuModel, maxStage)
		if err != nil {
			return nil, err
		}
		p.nodes[i] = pl
	}
	return p, nil
}

// ForRank is rank's engine planner (ForRank with its node's planner);
// nil on nil Planners (no calibration) or where the topology does not
// place rank.
func (p *Planners) ForRank(rank int) func(peer int, n int64, path sched.Path) *mpath.Plan {
	if p == nil {
		return nil
	}
	node, _, ok := p.tp.Locate(rank)
	if !ok {
		return nil
	}
	return ForRank(p.tp, rank, p.nodes[node])
}
