package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/topo"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// goring bench --netns: a job over the network-namespace testbed
// (tests/netns/testbed.sh, docs/netns.md). Node k's ranks run in namespace
// PREFIX-nodek; ranks of one node talk over shared memory, ranks of two
// nodes over the rail of the sender (one UCX worker per rail, bound to that
// rail's device); the coordinator listens on node 0's rail 0. Every run
// prints the simulator's prediction on the testbed's topology beside what
// it measured.

// netnsFlags are bench's testbed flags.
type netnsFlags struct {
	prefix string
	ppn    int
	rails  int
	rate   string  // one rail's tc rate, e.g. 500mbit
	alpha  float64 // a rail's start-up cost in the prediction, µs
}

func (n *netnsFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&n.prefix, "netns", "", "run on the network-namespace testbed PREFIX (tests/netns/testbed.sh): node k's ranks in namespace PREFIX-nodek, one UCX worker per rail")
	fl.IntVar(&n.ppn, "ppn", 0, "with --netns: ranks per node (--np defaults to --nodes x --ppn)")
	fl.IntVar(&n.rails, "rails", 0, "with --netns: rails to use (default: every railN device of node 0)")
	fl.StringVar(&n.rate, "rail-rate", "", "with --netns: one rail's rate for the prediction, as tc writes it (default: read from node 0's rail0 qdisc)")
	fl.Float64Var(&n.alpha, "rail-alpha", topo.TestbedRailAlphaUS, "with --netns: a rail's start-up cost for the prediction, µs")
}

func (n *netnsFlags) on() bool { return n.prefix != "" }

// nodeNetns is the namespace of node k.
func (n *netnsFlags) nodeNetns(k int) string { return fmt.Sprintf("%s-node%d", n.prefix, k) }

// resolveNetns completes the testbed flags on the launcher (rank count,
// rails, rate) and sets them on cmd, so that every rank, which receives
// the flags the launcher saw, builds the same job.
func resolveNetns(cmd *cobra.Command, f *benchFlags) error {
	n := &f.netns
	if !n.on() {
		if n.ppn != 0 || n.rails != 0 || n.rate != "" {
			return errors.New("--ppn, --rails and --rail-rate need --netns")
		}
		return nil
	}
	if f.mem != "host" && f.mem != "cuda" {
		return fmt.Errorf("--netns runs host or cuda memory (--mem %s)", f.mem)
	}
	if f.nodes < 1 || n.ppn < 1 {
		return errors.New("--netns needs --nodes N and --ppn L (at least 1 each)")
	}
	if f.np == 0 {
		f.np = f.nodes * n.ppn
	}
	if f.np != f.nodes*n.ppn {
		return fmt.Errorf("--np %d is not --nodes %d x --ppn %d", f.np, f.nodes, n.ppn)
	}
	for k := 0; k < f.nodes; k++ {
		if _, err := os.Stat(launch.NetnsPath(n.nodeNetns(k))); err != nil {
			return fmt.Errorf("--netns %s: no namespace %s (bring the testbed up: PREFIX=%s NODES=%d tests/netns/testbed.sh up)", n.prefix, n.nodeNetns(k), n.prefix, f.nodes)
		}
	}
	if n.rails == 0 {
		r, err := launch.CountRails(n.nodeNetns(0))
		if err != nil {
			return err
		}
		n.rails = r
	}
	if n.rate == "" {
		r, err := launch.RailRate(n.nodeNetns(0))
		if err != nil {
			return err
		}
		n.rate = r
	}
	settings := map[string]string{"np": strconv.Itoa(f.np), "rails": strconv.Itoa(n.rails), "rail-rate": n.rate}
	if f.timeout == 0 {
		// exec.TimeoutFor assumes at least 50 MB/s; a rail of the testbed
		// may carry a few MB/s, and a ring's every block crosses one.
		settings["timeout"] = netnsTimeout.String()
	}
	for name, v := range settings {
		if err := cmd.Flags().Set(name, v); err != nil {
			return err
		}
	}
	return nil
}

// netnsTimeout is a call's deadline on the testbed unless --timeout says
// otherwise. A dead rank is still named at once (the coordinator sees its
// connection close); only a stalled one waits this long.
const netnsTimeout = 5 * time.Minute

// topology is the testbed as a topology (topo.Testbed) for np ranks.
func (n *netnsFlags) topology(nodes, np int) (*topo.Topology, error) {
	if nodes < 1 || np%nodes != 0 {
		return nil, fmt.Errorf("--np %d does not split into --nodes %d equal nodes", np, nodes)
	}
	gbps, err := topo.ParseTCRate(n.rate)
	if err != nil {
		return nil, err
	}
	tb := topo.Testbed{Nodes: nodes, PPN: np / nodes, Rails: n.rails, RailGBps: gbps, RailAlphaUS: n.alpha,
		CopyGBps: topo.TestbedCopyGBps, CopyAlphaUS: topo.TestbedCopyAlphaUS}
	return tb.Topology()
}

// benchTopology is the job's topology: the testbed's with --netns (unless
// --topo names another), else benchTopo's.
func (f *benchFlags) benchTopology(np int) (*topo.Topology, error) {
	if f.netns.on() && f.topo == "" {
		return f.netns.topology(f.nodes, np)
	}
	return benchTopo(f.topo, f.nodes, np)
}

// configureNetns makes the local job start node k's ranks in PREFIX-nodek
// and the coordinator listen on node 0's rail 0.
func configureNetns(lj *launch.LocalJob, f *benchFlags) {
	if !f.netns.on() {
		return
	}
	ppn := f.np / f.nodes
	lj.Netns = func(rank int) string { return f.netns.nodeNetns(rank / ppn) }
	lj.CoordNetns = f.netns.nodeNetns(0)
	lj.CoordAddr = "198.18.0.1:0"
}

// joinRailJob is joinRankJob on the testbed: a shared-memory worker for
// the ranks of this node and one worker per rail (launch.OpenRailWorker)
// for the others, all of whose addresses travel in the coordinator's
// hello; the data plane is a ucxmp.Rails over them.
//
// With lanes (nLanes > 1, Multi-lane §3) every lane has a shared-memory
// worker of its own and one rail worker, lane w on rail w mod R: a rank's
// lanes then drive every rail, where one lane sends all of a rank's
// traffic to other nodes over its own rail (GPU i owns rail i).
func joinRailJob(ctx context.Context, role launch.Role, tp *topo.Topology, f *benchFlags, nLanes int, stderr io.Writer) (rj *rankJob, err error) {
	owned := &rankJob{}
	rj = owned
	defer func() {
		if err != nil {
			owned.close() // a failed join returns a nil rj: close what it opened
		}
	}()
	cfg := map[string]string{}
	if os.Getenv("UCX_TLS") == "" {
		cfg["TLS"] = launch.DefaultUCXTLS
		if f.mem == "cuda" {
			// As on one host (joinRankJob): device buffers of ranks of
			// one node move GPU to GPU where the push engine does not
			// carry them (--ipc=false, its control messages aside).
			cfg["TLS"] += ",cuda"
		}
	}
	// lanes[w] = [shared memory, its rails...]. Every worker has a UCX
	// context of its own, as on one host (launch.OpenLane): lanes progress
	// their workers from goroutines of their own, and a context is not
	// shared between threads here (an 8-lane run whose shared-memory
	// workers shared one context aborted in UCX's progress, double free).
	lanes := make([][]*launch.RankWorker, max(nLanes, 1))
	for w := range lanes {
		local, err := launch.OpenLane(launch.LaneConfig(cfg, w))
		if err != nil {
			return nil, err
		}
		rj.closers = append(rj.closers, local.Close)
		lanes[w] = []*launch.RankWorker{local.RankWorker}
		rails := []int{w % f.netns.rails}
		if nLanes <= 1 {
			rails = rails[:0]
			for r := 0; r < f.netns.rails; r++ {
				rails = append(rails, r)
			}
		}
		for _, r := range rails {
			rw, err := launch.OpenRailWorker(launch.RailDevice(r), launch.RailTLS)
			if err != nil {
				return nil, err
			}
			rj.closers = append(rj.closers, func() { rw.Close() })
			lanes[w] = append(lanes[w], rw)
		}
	}
	var addrs [][]byte
	for _, ws := range lanes {
		for _, w := range ws {
			addrs = append(addrs, w.Address)
		}
	}
	node, lrank, _ := tp.Locate(role.Rank)
	host, _ := os.Hostname()
	sess, err := launch.Start(ctx, role, launch.Peer{Host: host, Node: node, Local: lrank, Payload: launch.PackAddresses(addrs)}, launch.Options{})
	if err != nil {
		return nil, err
	}
	rj.sess = sess
	rj.watch(role.Rank, stderr)
	railOf := func(r int) int { n, l, _ := tp.Locate(r); return tp.Nodes[n].GPUs[l].Rail }
	if nLanes > 1 {
		railOf = func(int) int { return 0 } // a lane's one rail
	}
	peers := sess.Peers()
	for w, ws := range lanes {
		data, err := connectRails(role.Rank, tp, ws, lanePeers(peers, w, len(ws), len(lanes)), railOf)
		if err != nil {
			return nil, fmt.Errorf("lane %d: %w", w, err)
		}
		rj.data = append(rj.data, data)
		rj.closers = append(rj.closers, func() { data.Close() })
	}
	return rj, nil
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

// writePredictions prints, below the table, the simulator's time for every
// row on the job's topology, the ratio of the measured average to it, and
// that of the slowest rank's time: the simulator predicts when the last
// rank finishes, which the average hides where ranks finish far apart (a
// hot destination's alltoallv).
func writePredictions(out io.Writer, cfg bench.Config, rows []bench.Row) error {
	fmt.Fprintf(out, "# prediction: goring sim on %s (rail %.4g GB/s, alpha %.3g us)\n", cfg.Topo.Name, cfg.Topo.Rails[0].BetaGBps, cfg.Topo.Rails[0].AlphaUS)
	fmt.Fprintf(out, "%-16s %12s %14s %14s %10s %10s\n", "# Algorithm", "Size(B)", "Measured(us)", "Predicted(us)", "meas/pred", "max/pred")
	for _, r := range rows {
		name := r.Algorithm
		if r.Lanes > 0 {
			name += "/L" + strconv.Itoa(r.Lanes)
		}
		pred, err := predictUS(cfg, r.Algorithm, r.Bytes, r.Lanes)
		if err != nil {
			fmt.Fprintf(out, "%-16s %12d %14.2f %14s %10s %10s  (%v)\n", name, r.Bytes, r.AvgUS, "-", "-", "-", err)
			continue
		}
		fmt.Fprintf(out, "%-16s %12d %14.2f %14.2f %10.3f %10.3f\n", name, r.Bytes, r.AvgUS, pred, r.AvgUS/pred, r.MaxUS/pred)
	}
	return nil
}

// predictUS simulates the whole plan of alg at bytes as the bench ran it;
// on lanes > 1, every lane's plan at once, lane w on rail w mod R as
// joinRailJob binds them.
func predictUS(cfg bench.Config, alg string, bytes int64, lanes int) (float64, error) {
	spec := sched.Spec{Collective: cfg.Collective, Algorithm: alg, Topo: cfg.Topo, Bytes: bytes, Root: cfg.Root, DtypeBytes: 1, Chunks: cfg.Chunks}
	if cfg.Collective.Reduces() {
		spec.DtypeBytes = cfg.Dtype.Size()
	}
	if cfg.Collective == coll.Alltoallv {
		counts, err := cfg.Traffic(bytes)
		if err != nil {
			return 0, err
		}
		spec.Counts = counts
	}
	if lanes > 1 {
		// A lane's worker may use the machine's whole copy rate; the
		// testbed's per-rank copy link (topo.Testbed) already charges
		// the rank's share, which its lanes split.
		res, err := sim.RunLanes(spec, lanes, sim.Options{LanesOnRails: true, WorkerGBps: topo.TestbedCopyGBps})
		if err != nil {
			return 0, err
		}
		return res.TotalUS, nil
	}
	plan, err := sched.Generate(spec)
	if err != nil {
		return 0, err
	}
	res, err := sim.Simulate(cfg.Topo, plan, sim.Options{})
	if err != nil {
		return 0, err
	}
	return res.TotalUS, nil
}
