package main

import (
	"fmt"

	"github.com/schollz/progressbar/v3"

	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/sim"
)

// simRuns simulates every (algorithm, size) at most once and keeps the
// bottleneck for the output. Its predictUS is the model.CostPredictor the
// cost table of --alg auto calls, so the table and the rows share runs.
type simRuns struct {
	setup *simSetup
	memo  map[simKey]simMemo
	bar   *progressbar.ProgressBar
}

type simKey struct {
	alg   string
	bytes int64
}

type simMemo struct {
	us         float64
	err        error
	bottleneck string
}

func newSimRuns(s *simSetup, bar *progressbar.ProgressBar) *simRuns {
	return &simRuns{setup: s, memo: map[simKey]simMemo{}, bar: bar}
}

func (r *simRuns) run(alg string, bytes int64) simMemo {
	k := simKey{alg, bytes}
	if m, ok := r.memo[k]; ok {
		return m
	}
	m := simMemo{}
	spec, err := r.setup.spec(alg, bytes)
	if err == nil {
		var res *sim.Result
		if res, _, err = sim.Run(spec, r.setup.opt); err == nil {
			m.us, m.bottleneck = res.TotalUS, res.Bottleneck
		}
	}
	m.err = err
	if r.bar != nil {
		_ = r.bar.Add(1)
	}
	r.memo[k] = m
	return m
}

func (r *simRuns) predictUS(alg string, bytes int64) (float64, error) {
	m := r.run(alg, bytes)
	return m.us, m.err
}

// simulate fills the document: per size, every algorithm, or with --alg
// auto the one the cost table (what the UCC layer uses) finds fastest; the
// table samples powers of two and interpolates between. It is an error
// when nothing could run at all.
func (s *simSetup) simulate(runs *simRuns, f *simFlags) (*simDoc, error) {
	// Options change predictions, so they are part of the table's key.
	key := fmt.Sprintf("%s intra=%s chunks=%d dtype=%d serialce=%t calibration=%s", model.CostTableKey(s.topo), f.intra, f.chunks, s.dtype.Size(), f.serialCE, f.calibration)
	table := model.NewCostTable(string(s.coll), key, s.algs, runs.predictUS)
	doc := &simDoc{Collective: string(s.coll), Topology: s.topo.Name, Nodes: s.topo.NumNodes(), NRanks: s.topo.NumGPUs(),
		Calibration: f.calibration, CalibratedLinks: s.notes}
	for _, n := range s.sizes {
		if f.alg == "auto" {
			best, _, err := table.Best(n)
			if err != nil {
				doc.Results = append(doc.Results, simRow{Algorithm: "auto", Bytes: n, Error: err.Error()})
				continue
			}
			r := s.row(runs, best, n)
			r.Algorithm, r.Chosen = "auto", best
			doc.Results = append(doc.Results, r)
			continue
		}
		for _, a := range s.algs {
			r := s.row(runs, a, n)
			if r.Error != "" && len(s.algs) == 1 {
				return nil, fmt.Errorf("%s %s at %d bytes: %s", s.coll, a, n, r.Error)
			}
			doc.Results = append(doc.Results, r)
		}
	}
	if runs.bar != nil {
		_ = runs.bar.Finish()
	}
	for _, r := range doc.Results {
		if r.PredictedUS != nil {
			return doc, nil
		}
	}
	if len(doc.Results) > 0 {
		// Nothing could run: an error, not a table of dashes.
		return nil, fmt.Errorf("%s on %s: no algorithm can run: %s", s.coll, s.topo.Name, doc.Results[0].Error)
	}
	return doc, nil
}

// row is the result of one (algorithm, size), with its bus bandwidth.
func (s *simSetup) row(runs *simRuns, alg string, n int64) simRow {
	r := simRow{Algorithm: alg, Bytes: n}
	m := runs.run(alg, n)
	if m.err != nil {
		r.Error = m.err.Error()
		return r
	}
	us := m.us
	r.PredictedUS = &us
	if bw, err := sim.BusBandwidthGBps(s.coll, s.topo.NumGPUs(), n, us); err == nil {
		r.BusBWGBps = &bw
	}
	r.Bottleneck = m.bottleneck
	return r
}
