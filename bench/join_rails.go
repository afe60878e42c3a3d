package bench

import (
	"context"
	"fmt"

	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/topo"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// JoinRails is JoinLanes on the network-namespace testbed (docs/netns.md):
// a shared-memory worker for the ranks of this node and one worker per
// rail (launch.OpenRailWorker, rails of them) for the others, all of whose
// addresses travel in the coordinator's hello; the data plane is a
// ucxmp.Rails over them. The rank's place is tp's.
//
// With lanes (nLanes > 1, Multi-lane §3) every lane has a shared-memory
// worker of its own and one rail worker, lane w on rail w mod R: a rank's
// lanes then drive every rail, where one lane sends all of a rank's
// traffic to other nodes over its own rail (GPU i owns rail i).
func JoinRails(ctx context.Context, j Join, tp *topo.Topology, rails int, gpuMem bool, nLanes int) (*RankJob, error) {
	rj := &RankJob{}
	return joined(rj, rj.joinRails(ctx, j, tp, rails, gpuMem, nLanes))
}

func (rj *RankJob) joinRails(ctx context.Context, j Join, tp *topo.Topology, rails int, gpuMem bool, nLanes int) error {
	// Shared memory inside a node, as on one host (JoinLanes): device
	// buffers of ranks of one node move GPU to GPU where the push engine
	// does not carry them (--ipc=false, its control messages aside).
	cfg := ucxConfig(launch.DefaultUCXTLS, gpuMem)
	// lanes[w] = [shared memory, its rails...]. Every worker has a UCX
	// context of its own, as on one host (launch.OpenLane): lanes progress
	// their workers from goroutines of their own, and a context is not
	// shared between threads here (an 8-lane run whose shared-memory
	// workers shared one context aborted in UCX's progress, double free).
	lanes := make([][]*launch.RankWorker, max(nLanes, 1))
	for w := range lanes {
		local, err := launch.OpenLane(launch.LaneConfig(cfg, w))
		if err != nil {
			return err
		}
		rj.OnClose(local.Close)
		lanes[w] = []*launch.RankWorker{local.RankWorker}
		laneRails := []int{w % rails}
		if nLanes <= 1 {
			laneRails = laneRails[:0]
			for r := 0; r < rails; r++ {
				laneRails = append(laneRails, r)
			}
		}
		for _, r := range laneRails {
			rw, err := launch.OpenRailWorker(launch.RailDevice(r), launch.RailTLS)
			if err != nil {
				return err
			}
			rj.OnClose(func() { rw.Close() })
			lanes[w] = append(lanes[w], rw)
		}
	}
	var addrs [][]byte
	for _, ws := range lanes {
		for _, w := range ws {
			addrs = append(addrs, w.Address)
		}
	}
	j.Node, j.Local, _ = tp.Locate(j.Role.Rank)
	if err := rj.start(ctx, j, launch.PackAddresses(addrs)); err != nil {
		return err
	}
	railOf := func(r int) int { n, l, _ := tp.Locate(r); return tp.Nodes[n].GPUs[l].Rail }
	if nLanes > 1 {
		railOf = func(int) int { return 0 } // a lane's one rail
	}
	peers := rj.Sess.Peers()
	for w, ws := range lanes {
		data, err := connectRails(j.Role.Rank, tp, ws, lanePeers(peers, w, len(ws), len(lanes)), railOf)
		if err != nil {
			return fmt.Errorf("lane %d: %w", w, err)
		}
		rj.Data = append(rj.Data, data)
		rj.OnClose(func() { data.Close() })
	}
	return nil
}

// lanePeers is peers with each payload cut to lane w's n addresses (every
// rank packs n addresses for each of its lanes, lane after lane); a payload
// of another count is left empty, which connectRails refuses naming the
// rank.
func lanePeers(peers []launch.Peer, w, n, lanes int) []launch.Peer {
	out := make([]launch.Peer, len(peers))
	for i, p := range peers {
		out[i] = p
		out[i].Payload = nil
		if a, err := launch.UnpackAddresses(p.Payload, n*lanes); err == nil {
			out[i].Payload = launch.PackAddresses(a[w*n : (w+1)*n])
		}
	}
	return out
}

// connectRails connects workers[0] (shared memory) to the peers on this
// rank's node and workers[1+r] to rail r's worker of every peer on another
// node; railOf names the rail a rank sends on.
func connectRails(rank int, tp *topo.Topology, workers []*launch.RankWorker, peers []launch.Peer, railOf func(rank int) int) (*ucxmp.Rails, error) {
	nodeOf := func(r int) int { n, _, _ := tp.Locate(r); return n }
	sameNode := func(p int) bool { return nodeOf(p) == nodeOf(rank) }
	per := make([][][]byte, len(workers)) // per[w][peer]
	for w := range per {
		per[w] = make([][]byte, len(peers))
	}
	for p, peer := range peers {
		a, err := launch.UnpackAddresses(peer.Payload, len(workers))
		if err != nil {
			return nil, fmt.Errorf("rank %d's addresses: %w (does every rank use --rails %d?)", p, err, len(workers)-1)
		}
		if sameNode(p) {
			per[0][p] = a[0]
			continue
		}
		for w := 1; w < len(workers); w++ {
			per[w][p] = a[w]
		}
	}
	trs := make([]*ucxmp.Transport, len(workers))
	for w, rw := range workers {
		var tr *ucxmp.Transport
		var err error
		if w == 0 {
			tr, _, err = rw.Connect(rank, per[w], nil)
		} else {
			// A rail moves host memory only, whatever its UCX context
			// could detect: device bytes to another node cross through
			// goring's host staging (useRailsMemory), never through a
			// TCP context asked to read GPU memory.
			tr, err = ucxmp.New(rw.Worker, rank, per[w], ucxmp.Options{})
		}
		if err != nil {
			for _, t := range trs[:w] {
				t.Close()
			}
			return nil, err
		}
		trs[w] = tr
	}
	return ucxmp.NewRails(rank, trs[0], trs[1:], sameNode, railOf)
}
