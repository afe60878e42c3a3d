package sim

import (
	"github.com/goring-hpc/goring/sched"
)

// Run generates the plan of spec with sched.Generate and simulates it over
// spec.Topo. The plan is returned too.
func Run(spec sched.Spec, opt Options) (*Result, *sched.Plan, error) {
	plan, err := sched.Generate(spec)
	if err != nil {
		return nil, nil, err
	}
	res, err := Simulate(spec.Topo, plan, opt)
	if err != nil {
		return nil, plan, err
	}
	return res, plan, nil
}
