package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/sweep"
)

// goring sim --lanes (Multi-lane, §3): the flags of sweep.Lanes and the
// simulator's worker model (sim.Options.WorkerGBps, NodeCores).

// parseSimLanes reads --lanes: "" (no lanes: the simulation of before
// lanes), a count, a comma list, or auto.
func parseSimLanes(spec string, c coll.Collective, maxW int) (*sweep.Lanes, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, nil
	}
	if spec == "auto" {
		if err := coll.CheckLanes(c, maxW); err != nil {
			return nil, fmt.Errorf("--max-lanes: %w", err)
		}
		return &sweep.Lanes{Auto: true, Max: maxW}, nil
	}
	l := &sweep.Lanes{}
	for _, s := range strings.Split(spec, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("--lanes %q: want a count, a comma list of counts, or auto", spec)
		}
		if err := coll.CheckLanes(c, w); err != nil {
			return nil, fmt.Errorf("--lanes: %w", err)
		}
		l.Counts = append(l.Counts, w)
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

// simLabel is a result's column in the table: the algorithm, and its lane
// count on lane runs ("ring/L4"; auto's "ring/Lauto").
func simLabel(r sweep.Row, lanesAuto bool) string {
	switch {
	case r.Lanes == 0 && !lanesAuto:
		return r.Algorithm
	case lanesAuto:
		return r.Algorithm + "/Lauto"
	}
	return r.Algorithm + "/L" + strconv.Itoa(r.Lanes)
}
