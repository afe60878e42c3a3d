package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/launch"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// goring bench --lanes (Multi-lane, §3): through the team layer a rank
// makes a team per lane count, whose context opens that many lanes
// (bench_team.go; the team's lanes runner splits each call). Where bench
// runs its own executor (the namespace testbed), a rank opens one lane per
// worker it drives, each a UCX context and worker of its own
// (launch.OpenLane); the coordinator's hello carries every lane's
// address; lane w connects to lane w of every peer; bench.RunLanes splits
// each call over the lanes.

// parseLanes reads --lanes: a count or a comma list of counts, each from 1
// to coll.MaxLanes. "1" is nil: one lane, output exactly as before lanes.
// "auto" is nil too: one team, whose context lets each call take the
// lanes it pays for (option lanes=auto, benchTeamOptions), as UCC's
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
	if mem != "host" && maxLanes(lanes) > 1 {
		return nil, fmt.Errorf("--lanes %s: lanes run on host memory only so far (--mem %s: the push engine and the stager serve one lane)", spec, mem)
	}
	return lanes, nil
}

// lanesAuto is --lanes auto.
const lanesAuto = "auto"

// autoLanes says whether f asks for --lanes auto.
func (f *benchFlags) autoLanes() bool { return strings.TrimSpace(f.lanes) == lanesAuto }

// maxLanes is how many lanes a rank opens for lanes (nil: one).
func maxLanes(lanes []int) int {
	n := 1
	for _, w := range lanes {
		n = max(n, w)
	}
	return n
}

// lanesNote names a lane count in messages ("" for one lane).
func lanesNote(w int) string {
	if w <= 1 {
		return ""
	}
	return fmt.Sprintf(" on %d lanes", w)
}

// openRankLanes opens n lanes with the rank's UCX settings; on an error
// the lanes already open are closed.
func openRankLanes(n int, base map[string]string) ([]*launch.Lane, error) {
	var lanes []*launch.Lane
	for w := 0; w < n; w++ {
		l, err := launch.OpenLane(launch.LaneConfig(base, w))
		if err != nil {
			closeLanes(lanes)
			return nil, fmt.Errorf("lane %d: %w", w, err)
		}
		lanes = append(lanes, l)
	}
	return lanes, nil
}

// closeLanes closes lanes, newest first.
func closeLanes(lanes []*launch.Lane) {
	for i := len(lanes) - 1; i >= 0; i-- {
		lanes[i].Close()
	}
}

// laneAddresses is the payload a rank's hello carries.
func laneAddresses(lanes []*launch.Lane) []byte {
	addrs := make([][]byte, len(lanes))
	for w, l := range lanes {
		addrs[w] = l.Address
	}
	return launch.EncodeLaneAddresses(addrs)
}

// connectLanes connects lane w of this rank to lane w of every peer; on an
// error the transports already made are closed.
func connectLanes(lanes []*launch.Lane, rank int, peers []launch.Peer) ([]*ucxmp.Transport, error) {
	addrs := make([][][]byte, len(lanes)) // [lane][rank]
	for w := range addrs {
		addrs[w] = make([][]byte, len(peers))
	}
	for r, p := range peers {
		la, err := launch.DecodeLaneAddresses(p.Payload, len(lanes))
		if err != nil {
			return nil, fmt.Errorf("rank %d's hello: %w", r, err)
		}
		for w := range lanes {
			addrs[w][r] = la[w]
		}
	}
	var trs []*ucxmp.Transport
	for w, l := range lanes {
		// No UCX peer errors: the coordinator watches every rank.
		tr, _, err := l.Connect(rank, addrs[w], nil)
		if err != nil {
			for _, t := range trs {
				t.Close()
			}
			return nil, fmt.Errorf("lane %d: %w", w, err)
		}
		trs = append(trs, tr)
	}
	return trs, nil
}
