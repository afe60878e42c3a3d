package bench

import (
	"fmt"

	"github.com/goring-hpc/goring/sched"
)

// Auto is the algorithm name of the calls that name none (team.Args.Alg
// ""): the team picks, as it does for UCC's calls, goring's choice
// (choose.Auto on the team's shape) and the runner that serves it, the
// engines that run no sched program included (node kernels, cross-memory
// reads, lanes=auto, the device defaults and pieces). Auto runs through
// the team layer only (Config.Team); its rows say auto, and which
// algorithm and runner the team ran (Row.Ran, Row.Runner).
const Auto = "auto"

// autoPlan is Config.Plan for Auto. The team decides what runs; bench
// needs a plan only for what every algorithm of the collective shares at
// the size: the caller's buffer sizes, the ranks, the bytes (and
// alltoallv's counts, dispatch's routing) that size the buffers, the
// pattern and the row. It is the plan of the first registered algorithm
// that serves the size, named Auto; where none does, the size is
// unsupported, as for a named algorithm.
func (c *Config) autoPlan(bytes int64) (*sched.Plan, error) {
	algs := sched.Algorithms(c.Collective)
	if len(algs) == 0 {
		return nil, fmt.Errorf("no algorithms registered for %s", c.Collective)
	}
	var last error
	for _, a := range algs {
		plan, err := c.Plan(a.Name, bytes)
		if sched.IsUnsupported(err) {
			last = err
			continue
		}
		if err != nil {
			return nil, err
		}
		plan.Algorithm = Auto
		return plan, nil
	}
	return nil, sched.Unsupported(Auto, "no %s algorithm serves %d bytes: %v", c.Collective, bytes, last)
}
