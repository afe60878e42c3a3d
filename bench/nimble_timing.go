package bench

import (
	"time"

	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/nimble"
	"github.com/goring-hpc/goring/sched"
)

// NimblePlannerRuns is how often TimeNimblePlanner runs each way of
// planning; the best run counts.
const NimblePlannerRuns = 20

// TimeNimblePlanner times NIMBLE's planner on the dispatch demand of
// spec's routing, best of NimblePlannerRuns runs each: warm is
// nimble.Planner.Plan on a planner built once for the topology (as a
// framework plans every layer), cold is nimble.PlanMWU from scratch (the
// network and the pairs' paths too). mw is the warm planner's plan.
func TimeNimblePlanner(spec sched.Spec) (warm, cold time.Duration, mw *nimble.MWUPlan, err error) {
	lay, err := moe.NewLayout(spec.Routing)
	if err != nil {
		return 0, 0, nil, err
	}
	demand := sched.MoEDemand(lay)
	o := nimble.MWUOptions{ElemBytes: int(spec.Routing.TokenBytes)}
	pl, err := nimble.NewPlanner(spec.Topo)
	if err != nil {
		return 0, 0, nil, err
	}
	warm, cold = time.Duration(1<<62), time.Duration(1<<62)
	for i := 0; i < NimblePlannerRuns; i++ {
		t0 := time.Now()
		if mw, err = pl.Plan(demand, o); err != nil {
			return 0, 0, nil, err
		}
		warm = min(warm, time.Since(t0))
		t0 = time.Now()
		if _, err = nimble.PlanMWU(spec.Topo, demand, o); err != nil {
			return 0, 0, nil, err
		}
		cold = min(cold, time.Since(t0))
	}
	return warm, cold, mw, nil
}
