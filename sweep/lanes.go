package sweep

import (
	"fmt"

	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
)

// Lanes (Multi-lane, §3): each lane count predicted with the simulator's
// worker model (sim.Options.WorkerGBps, NodeCores), or auto:
// sim.ChooseLanes over 1..Max per algorithm and size.
type Lanes struct {
	Counts []int // the counts to predict; nil with Auto
	Auto   bool
	Max    int // Auto's largest count
}

// runLanes simulates (alg, bytes) on w lanes, once.
func (s *Runner) runLanes(alg string, bytes int64, w int) run {
	return s.memo(fmt.Sprint(alg, "@", bytes, "/", w), alg, bytes, func(spec sched.Spec) (*sim.Result, error) {
		return sim.RunLanes(spec, w, s.j.Opt)
	})
}

// laneRow is the document's row of (alg, n) on w lanes.
func (s *Runner) laneRow(alg string, n int64, w int) Row {
	return s.row(alg, n, w, s.runLanes(alg, n, w), nil)
}

// LaneResults predicts every (algorithm, size) on each lane count of
// j.Lanes, or on the count auto picks (the row's Chosen says which).
func (j *Job) LaneResults(s *Runner) (*Doc, error) {
	doc := j.newDoc()
	doc.WorkerGBps, doc.NodeCores = j.Opt.WorkerGBps, j.Opt.NodeCores
	for _, n := range j.Sizes {
		for _, a := range j.Algs {
			if !j.Lanes.Auto {
				for _, w := range j.Lanes.Counts {
					doc.Results = append(doc.Results, s.laneRow(a, n, w))
				}
				continue
			}
			w, _, err := sim.ChooseLanes(j.Lanes.Max, func(w int) (float64, error) {
				m := s.runLanes(a, n, w)
				return m.us, m.err
			})
			if err != nil {
				doc.Results = append(doc.Results, Row{Algorithm: a, Bytes: n, Error: err.Error()})
				continue
			}
			r := s.laneRow(a, n, w)
			r.Chosen = fmt.Sprintf("%s:%d lanes", a, w)
			doc.Results = append(doc.Results, r)
		}
	}
	return j.anyPredicted(doc, "nothing can run on lanes")
}
