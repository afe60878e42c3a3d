package choose

import (
	"fmt"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/topo"
)

// Costs is the model's cost table of c on t: every registered algorithm
// of c, simulated with opt on demand and kept for the process
// (model.CachedCostTable), with one-byte elements so that every size the
// table samples is a whole number of them. Auto asks it where no row of
// the table covers a shape.
func Costs(c coll.Collective, t *topo.Topology, opt sim.Options) *model.CostTable {
	algs := sched.AlgorithmNames(c)
	key := fmt.Sprintf("%s %+v", model.CostTableKey(t), opt)
	return model.CachedCostTable(string(c), key, algs, func(alg string, bytes int64) (float64, error) {
		res, _, err := sim.Run(sched.Spec{Collective: c, Algorithm: alg, Topo: t, Bytes: bytes, DtypeBytes: 1}, opt)
		if err != nil {
			return 0, err
		}
		return res.TotalUS, nil
	})
}

// OnTopology is the shape of a call of c on bytes on t as goring's team
// layer would see it with a rank per GPU entry of t: device memory, and
// on one host the push engine carrying every transfer (the team layer's
// default). GPU entries that are processes sharing one GPU (topo.GPU's
// Share, as in topo.SharedGPU) are one shared GPU.
func OnTopology(c coll.Collective, bytes int64, t *topo.Topology) Shape {
	nodes := t.NumNodes()
	s := Shape{Coll: c, Bytes: bytes, Size: t.NumGPUs(), Nodes: nodes, GPUs: t.GPUsPerNode(), Push: nodes == 1}
	if nodes == 1 && s.Size > 1 && t.Nodes[0].GPUs[0].Share == s.Size {
		s.SharedGPU, s.GPUs = true, 1
	}
	return s
}

// Generate is the plan of spec with its algorithm chosen by Auto for s
// (the model on spec's topology where the table has no row): the choice,
// else its fallback where the choice cannot serve spec. The plan's note
// says which and why.
func Generate(spec sched.Spec, s Shape) (*sched.Plan, error) {
	ch, err := Auto(s, Costs(spec.Collective, spec.Topo, sim.Options{}))
	if err != nil {
		return nil, err
	}
	names := []string{ch.Alg}
	if ch.Fallback != "" {
		names = append(names, ch.Fallback)
	}
	plan, err := sched.GenerateFirst(spec, names)
	if err != nil {
		return nil, fmt.Errorf("auto: %w", err)
	}
	plan.Note = "auto: " + plan.Note + "; " + ch.Why
	return plan, nil
}
