package bench

import (
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/topo"
)

// PredictUS is the simulator's time of the whole plan of alg at bytes on
// c's topology, as the bench runs it, for the rows a testbed run prints
// beside what it measured (goring bench --netns): the plan generated on
// Topo, simulated on PredictTopo where set. On lanes > 1 every lane's plan
// runs at once on Topo, lane w on rail w mod R as JoinRails binds them
// (lanes are host memory only: --mem cuda refuses them).
func (c *Config) PredictUS(alg string, bytes int64, lanes int) (float64, error) {
	spec, err := c.spec(alg, bytes)
	if err != nil {
		return 0, err
	}
	if lanes > 1 {
		// A lane's worker may use the machine's whole copy rate; the
		// testbed's per-rank copy link (topo.Testbed) already charges
		// the rank's share, which its lanes split.
		res, err := sim.RunLanes(spec, lanes, sim.Options{LanesOnRails: true, WorkerGBps: topo.TestbedCopyGBps})
		if err != nil {
			return 0, err
		}
		return res.TotalUS, nil
	}
	// The plan is the one the rows ran, generated on Topo; PredictTopo has
	// the same ranks, nodes and rails, only other links.
	plan, err := sched.Generate(spec)
	if err != nil {
		return 0, err
	}
	res, err := sim.Simulate(c.predictTopo(), plan, sim.Options{})
	if err != nil {
		return 0, err
	}
	return res.TotalUS, nil
}

// predictTopo is the topology the prediction runs on (Config.PredictTopo).
func (c *Config) predictTopo() *topo.Topology {
	if c.PredictTopo != nil {
		return c.PredictTopo
	}
	return c.Topo
}
