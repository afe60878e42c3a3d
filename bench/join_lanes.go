package bench

import (
	"context"
	"fmt"

	"github.com/goring-hpc/goring/launch"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// JoinLanes creates a UCX context and worker (UCX_TLS, or
// launch.DefaultTLS, with UCX's cuda transports for device buffers: gpuMem)
// per lane, joins the coordinator with the workers' addresses and the
// rank's emulated place, and connects each lane to that lane of every
// peer. Where bench runs its own executor a rank opens one lane per worker
// it drives, each a UCX context and worker of its own (launch.OpenLane);
// RunLanes splits each call over them (Multi-lane, §3). goring calibrate
// and bench p2p join so too, with one lane.
func JoinLanes(ctx context.Context, j Join, gpuMem bool, nLanes int) (*RankJob, error) {
	rj := &RankJob{}
	return joined(rj, rj.joinLanes(ctx, j, gpuMem, nLanes))
}

func (rj *RankJob) joinLanes(ctx context.Context, j Join, gpuMem bool, nLanes int) error {
	lanes, err := openRankLanes(max(nLanes, 1), ucxConfig(launch.DefaultTLS(), gpuMem))
	if err != nil {
		return err
	}
	rj.OnClose(func() { closeLanes(lanes) })
	if err := rj.start(ctx, j, laneAddresses(lanes)); err != nil {
		return err
	}
	trs, err := connectLanes(lanes, j.Role.Rank, rj.Sess.Peers())
	if err != nil {
		return err
	}
	rj.Tr = trs[0]
	for _, t := range trs {
		rj.Data = append(rj.Data, t)
	}
	rj.OnClose(func() {
		for i := len(trs) - 1; i >= 0; i-- {
			trs[i].Close()
		}
	})
	return nil
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
