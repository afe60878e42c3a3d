package launch

import (
	"fmt"
	"maps"

	"github.com/goring-hpc/goring/ucx"
)

// Lane is one lane of a rank (Multi-lane, §3: several workers per rank,
// each driving part of the buffer): a UCX context opened with the lane's
// own configuration and a RankWorker on it, so that each lane has its own
// worker, endpoints and tag space. goring bench and the UCC team layer
// open every lane, lane 0 included, through OpenLane.
type Lane struct {
	*RankWorker
	uctx *ucx.Context
}

// OpenLane opens a lane with UCX settings config (ucx.Options.Config, by
// name without the UCX_ prefix). LaneConfig makes a lane's settings from
// the rank's.
func OpenLane(config map[string]string) (*Lane, error) {
	uctx, err := ucx.Init(ucx.Options{Config: config})
	if err != nil {
		return nil, err
	}
	rw, err := OpenRankWorker(uctx)
	if err != nil {
		_ = uctx.Close()
		return nil, err
	}
	return &Lane{RankWorker: rw, uctx: uctx}, nil
}

// Context is the lane's UCX context.
func (l *Lane) Context() *ucx.Context { return l.uctx }

// Close releases the worker, then the context; the caller has closed the
// lane's transport first.
func (l *Lane) Close() {
	_ = l.RankWorker.Close()
	_ = l.uctx.Close()
}

// LaneConfig is lane's UCX settings on one host, a copy of the rank's base
// settings: every lane reaches its peers the same way. On the testbed a
// lane is bound to a rail instead (goring bench --netns opens lane w's
// network worker with OpenRailWorker on rail w mod R).
func LaneConfig(base map[string]string, lane int) map[string]string {
	_ = lane
	return maps.Clone(base)
}

// EncodeLaneAddresses packs a rank's lane worker addresses into the one
// payload its bootstrap carries (the coordinator's hello, a team's card).
// One lane is its address, unchanged, so a one-lane job's payload is what
// it was before lanes; several are packed as PackAddresses packs them, in
// lane order.
func EncodeLaneAddresses(addrs [][]byte) []byte {
	if len(addrs) == 1 {
		return addrs[0]
	}
	return PackAddresses(addrs)
}

// DecodeLaneAddresses unpacks a payload of lanes addresses (every rank of
// a job runs the same number of lanes).
func DecodeLaneAddresses(b []byte, lanes int) ([][]byte, error) {
	if lanes == 1 {
		return [][]byte{b}, nil
	}
	out, err := unpackAll(b)
	if err != nil {
		return nil, fmt.Errorf("lane addresses: %w", err)
	}
	if len(out) != lanes {
		return nil, fmt.Errorf("lane addresses: %d lanes, want %d (every rank must run the same number of lanes)", len(out), lanes)
	}
	return out, nil
}
