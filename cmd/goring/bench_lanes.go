package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/coll"
)

// goring bench --lanes (Multi-lane, §3): through the team layer a rank
// makes a team per lane count, whose context opens that many lanes
// (bench.JoinTeams; the team's lanes runner splits each call). Where bench
// runs its own executor (the namespace testbed), a rank opens one lane per
// worker it drives (bench.JoinLanes, bench.JoinRails); bench.RunLanes
// splits each call over the lanes.

// parseLanes reads --lanes: a count or a comma list of counts, each from 1
// to coll.MaxLanes. "1" is nil: one lane, output exactly as before lanes.
// "auto" is nil too: one team, whose context lets each call take the
// lanes it pays for (option lanes=auto, bench.TeamOptions), as UCC's
// UCC_TL_GORING_LANES=auto does; its rows name the runner.
func parseLanes(spec string, c coll.Collective, mem string) ([]int, error) {
	switch strings.TrimSpace(spec) {
	case "1":
		return nil, nil
	case lanesAuto:
		if mem != "host" {
			return nil, fmt.Errorf("--lanes auto: lanes run on host memory only so far (--mem %s)", mem)
		}
		return nil, nil
	}
	var lanes []int
	for _, s := range strings.Split(spec, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("--lanes %q: want a count or a comma list of counts, e.g. 1,2,4", spec)
		}
		if err := coll.CheckLanes(c, w); err != nil {
			return nil, fmt.Errorf("--lanes: %w", err)
		}
		lanes = append(lanes, w)
	}
	if mem != "host" && bench.MaxLanes(lanes) > 1 {
		return nil, fmt.Errorf("--lanes %s: lanes run on host memory only so far (--mem %s: the push engine and the stager serve one lane)", spec, mem)
	}
	return lanes, nil
}

// lanesAuto is --lanes auto.
const lanesAuto = "auto"

// autoLanes says whether f asks for --lanes auto.
func (f *benchFlags) autoLanes() bool { return strings.TrimSpace(f.lanes) == lanesAuto }
