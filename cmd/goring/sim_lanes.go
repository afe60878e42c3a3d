package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
)

// goring sim --lanes (Multi-lane, §3): each lane count predicted with the
// simulator's worker model (sim.Options.WorkerGBps, NodeCores), or "auto":
// sim.ChooseLanes over 1..--max-lanes per algorithm and size.

// simLanes is what --lanes asked for.
type simLanes struct {
	counts []int // the counts to predict; nil with auto
	auto   bool
	max    int // auto's largest count
}

// parseSimLanes reads --lanes: "" (no lanes: the simulation of before
// lanes), a count, a comma list, or auto.
func parseSimLanes(spec string, c coll.Collective, maxW int) (*simLanes, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, nil
	}
	if spec == "auto" {
		if err := coll.CheckLanes(c, maxW); err != nil {
			return nil, fmt.Errorf("--max-lanes: %w", err)
		}
		return &simLanes{auto: true, max: maxW}, nil
	}
	l := &simLanes{}
	for _, s := range strings.Split(spec, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("--lanes %q: want a count, a comma list of counts, or auto", spec)
		}
		if err := coll.CheckLanes(c, w); err != nil {
			return nil, fmt.Errorf("--lanes: %w", err)
		}
		l.counts = append(l.counts, w)
	}
	return l, nil
}

// laneOptions sets the worker model of a lanes run.
func laneOptions(opt sim.Options, f *simFlags) (sim.Options, error) {
	if f.workerGBps < 0 || f.nodeCores < 0 {
		return opt, fmt.Errorf("--worker-gbps %g --node-cores %d: want positive figures", f.workerGBps, f.nodeCores)
	}
	opt.WorkerGBps = f.workerGBps
	if opt.WorkerGBps == 0 {
		opt.WorkerGBps = sim.DefaultWorkerGBps
	}
	opt.NodeCores = f.nodeCores
	opt.LanesOnRails = f.lanesOnRails
	return opt, nil
}

// runLanes simulates (alg, bytes) on w lanes, once.
func (s *simulator) runLanes(alg string, bytes int64, w int) simRun {
	return s.memo(fmt.Sprint(alg, "@", bytes, "/", w), alg, bytes, func(spec sched.Spec) (*sim.Result, error) {
		return sim.RunLanes(spec, w, s.j.opt)
	})
}

// laneRow is the output row of (alg, n) on w lanes.
func (s *simulator) laneRow(alg string, n int64, w int) simRow {
	r := simRow{Algorithm: alg, Bytes: n, Lanes: w}
	m := s.runLanes(alg, n, w)
	if m.err != nil {
		r.Error = m.err.Error()
		return r
	}
	us := m.us
	r.PredictedUS = &us
	if bw, err := coll.BusBandwidthGBps(s.j.c, s.j.topo.NumGPUs(), n, nil, us); err == nil {
		r.BusBWGBps = &bw
	}
	r.Bottleneck = m.bottleneck
	return r
}

// laneResults predicts every (algorithm, size) on each lane count, or on
// the count auto picks (the row's chosen says which).
func (j *simJob) laneResults(s *simulator) (*simDoc, error) {
	doc := &simDoc{Collective: string(j.c), Topology: j.topo.Name, Nodes: j.topo.NumNodes(), NRanks: j.topo.NumGPUs(), Calibration: j.notes,
		WorkerGBps: j.opt.WorkerGBps, NodeCores: j.opt.NodeCores}
	for _, n := range j.sizes {
		for _, a := range j.algs {
			if !j.lanes.auto {
				for _, w := range j.lanes.counts {
					doc.Results = append(doc.Results, s.laneRow(a, n, w))
				}
				continue
			}
			w, _, err := sim.ChooseLanes(j.lanes.max, func(w int) (float64, error) {
				m := s.runLanes(a, n, w)
				return m.us, m.err
			})
			if err != nil {
				doc.Results = append(doc.Results, simRow{Algorithm: a, Bytes: n, Error: err.Error()})
				continue
			}
			r := s.laneRow(a, n, w)
			r.Chosen = fmt.Sprintf("%s:%d lanes", a, w)
			doc.Results = append(doc.Results, r)
		}
	}
	for _, r := range doc.Results {
		if r.PredictedUS != nil {
			return doc, nil
		}
	}
	if len(doc.Results) > 0 {
		return nil, fmt.Errorf("%s on %s: nothing can run on lanes: %s", j.c, j.topo.Name, doc.Results[0].Error)
	}
	return doc, nil
}

// simLabel is a result's column in the table: the algorithm, and its lane
// count on lane runs ("ring/L4"; auto's "ring/Lauto").
func simLabel(r simRow, lanesAuto bool) string {
	switch {
	case r.Lanes == 0 && !lanesAuto:
		return r.Algorithm
	case lanesAuto:
		return r.Algorithm + "/Lauto"
	}
	return r.Algorithm + "/L" + strconv.Itoa(r.Lanes)
}
