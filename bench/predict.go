package bench

import (
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/topo"
)

// Prediction is the simulator's time of one row's plan, in the two
// statistics a row measures across ranks: a rank's time is its own time
// per call, Row.AvgUS their average and Row.MaxUS the slowest's. Where the
// ranks of a plan finish far apart (leader, a hot destination's nimble)
// the two differ, and each measured statistic is compared with its own.
type Prediction struct {
	// SlowestUS is when the last rank finishes (sim.Result.TotalUS):
	// Row.MaxUS's prediction.
	SlowestUS float64
	// MeanUS is when each rank finishes, averaged over ranks
	// (sim.Result.MeanRankEndUS): Row.AvgUS's prediction.
	MeanUS float64
}

// Ratios are measured over predicted, like with like: r's average over
// the predicted mean (meas/pred) and r's slowest rank over the predicted
// slowest (max/pred).
func (p Prediction) Ratios(r Row) (avg, slowest float64) {
	return r.AvgUS / p.MeanUS, r.MaxUS / p.SlowestUS
}

// predictionOf is a simulated run's Prediction.
func predictionOf(res *sim.Result) Prediction {
	return Prediction{SlowestUS: res.TotalUS, MeanUS: res.MeanRankEndUS()}
}

// Predict is the simulator's time of the whole plan of alg at bytes on
// c's topology, as the bench runs it, for the rows a testbed run prints
// beside what it measured (goring bench --netns): the plan generated on
// Topo, simulated on PredictTopo where set. On lanes > 1 every lane's plan
// runs at once on Topo, lane w on rail w mod R as JoinRails binds them
// (lanes are host memory only: --mem cuda refuses them).
func (c *Config) Predict(alg string, bytes int64, lanes int) (Prediction, error) {
	spec, err := c.spec(alg, bytes)
	if err != nil {
		return Prediction{}, err
	}
	if lanes > 1 {
		// A lane's worker may use the machine's whole copy rate; the
		// testbed's per-rank copy link (topo.Testbed) already charges
		// the rank's share, which its lanes split.
		res, err := sim.RunLanes(spec, lanes, sim.Options{LanesOnRails: true, WorkerGBps: topo.TestbedCopyGBps})
		if err != nil {
			return Prediction{}, err
		}
		return predictionOf(res), nil
	}
	// The plan is the one the rows ran, generated on Topo; PredictTopo has
	// the same ranks, nodes and rails, only other links.
	plan, err := sched.Generate(spec)
	if err != nil {
		return Prediction{}, err
	}
	res, err := sim.Simulate(c.predictTopo(), plan, sim.Options{})
	if err != nil {
		return Prediction{}, err
	}
	return predictionOf(res), nil
}

// predictTopo is the topology the prediction runs on (Config.PredictTopo).
func (c *Config) predictTopo() *topo.Topology {
	if c.PredictTopo != nil {
		return c.PredictTopo
	}
	return c.Topo
}
