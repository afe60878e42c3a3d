package sweep

import (
	"fmt"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
)

// run is one simulated (algorithm, size[, lanes]).
type run struct {
	us         float64 // the last rank's finish (sim.Result.TotalUS)
	avgUS      float64 // the ranks' average finish (sim.Result.MeanRankEndUS)
	err        error
	bottleneck string
	counts     [][]int64 // alltoallv's matrix, for the bus bandwidth
}

// Runner simulates each (algorithm, size[, lanes]) of a job at most once,
// keeping the bottlenecks for the rows.
type Runner struct {
	j     *Job
	memos map[string]run
	// OnRun, if set, is called after every simulation (a progress bar's
	// step).
	OnRun func()
}

// NewRunner is j's runner.
func (j *Job) NewRunner() *Runner { return &Runner{j: j, memos: map[string]run{}} }

// Runs is how many simulations a job of every algorithm at every size
// makes, or -1 where auto's cost table decides how many it needs.
func (j *Job) Runs(auto bool) int {
	if auto {
		return -1
	}
	return len(j.Algs) * len(j.Sizes)
}

func (s *Runner) run(alg string, bytes int64) run {
	return s.memo(fmt.Sprint(alg, "@", bytes), alg, bytes, func(spec sched.Spec) (*sim.Result, error) {
		res, _, err := sim.Run(spec, s.j.Opt)
		return res, err
	})
}

// memo runs (alg, bytes) through simulate once per key: the result, or the
// error, is kept, and OnRun counts the run.
func (s *Runner) memo(k, alg string, bytes int64, simulate func(sched.Spec) (*sim.Result, error)) run {
	if m, ok := s.memos[k]; ok {
		return m
	}
	var m run
	spec, err := s.j.Spec(alg, bytes)
	if err == nil {
		m.counts = spec.Counts
		var res *sim.Result
		if res, err = simulate(spec); err == nil {
			m.us, m.avgUS, m.bottleneck = res.TotalUS, res.MeanRankEndUS(), res.Bottleneck
		}
	}
	m.err = err
	if s.OnRun != nil {
		s.OnRun()
	}
	s.memos[k] = m
	return m
}

// row is the document's row of m, the run of (alg, n) on lanes lanes
// (0: no lanes); counts gives the bus bandwidth alltoallv's matrix.
func (s *Runner) row(alg string, n int64, lanes int, m run, counts [][]int64) Row {
	r := Row{Algorithm: alg, Bytes: n, Lanes: lanes}
	if m.err != nil {
		r.Error = m.err.Error()
		return r
	}
	us := m.us
	r.PredictedUS = &us
	if s.j.RankAvg {
		avg := m.avgUS
		r.PredictedAvgUS = &avg
	}
	if bw, err := coll.BusBandwidthGBps(s.j.Coll, s.j.Topo.NumGPUs(), n, counts, us); err == nil {
		r.BusBWGBps = &bw
	}
	r.Bottleneck = m.bottleneck
	return r
}

// Row is the document's row of one (algorithm, size).
func (s *Runner) Row(alg string, n int64) Row {
	m := s.run(alg, n)
	return s.row(alg, n, 0, m, m.counts)
}
