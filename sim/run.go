package sim

import (
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
)

// Run generates the plan of spec with sched.Generate and simulates it over
// spec.Topo. The plan is returned too (its Note says what "auto" chose).
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

// Predictor adapts the simulator to the predictor that model.CostTable
// takes: base fixes the collective, topology and everything else; each
// call sets the algorithm and the byte count and returns the predicted
// time in microseconds. Errors from sched (an *sched.UnsupportedError
// included) pass through unchanged.
func Predictor(base sched.Spec, opt Options) func(alg string, bytes int64) (float64, error) {
	return func(alg string, bytes int64) (float64, error) {
		spec := base
		spec.Algorithm = alg
		spec.Bytes = bytes
		res, _, err := Run(spec, opt)
		if err != nil {
			return 0, err
		}
		return res.TotalUS, nil
	}
}

// BusBandwidthGBps is coll.BusBandwidthGBps for uniform traffic (nil
// counts), where the rules of nccl-tests are defined once.
func BusBandwidthGBps(c coll.Collective, nranks int, bytes int64, us float64) (float64, error) {
	return coll.BusBandwidthGBps(c, nranks, bytes, nil, us)
}
