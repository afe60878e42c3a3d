package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/topo"
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

// resolveNetns completes the testbed flags on the launcher (rank count;
// rails and rate as launch.Testbed finds them) and sets them on cmd, so that every rank, which receives
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
	tb := launch.Testbed{Prefix: n.prefix, Nodes: f.nodes, Rails: n.rails, Rate: n.rate}
	if ns := tb.Missing(); ns != "" {
		return fmt.Errorf("--netns %s: no namespace %s (bring the testbed up: PREFIX=%s NODES=%d tests/netns/testbed.sh up)", n.prefix, ns, n.prefix, f.nodes)
	}
	if err := tb.Complete(); err != nil {
		return err
	}
	n.rails, n.rate = tb.Rails, tb.Rate
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

// topology is the testbed as a topology (topo.MeasuredTestbed) for np
// ranks.
func (n *netnsFlags) topology(nodes, np int) (*topo.Topology, error) {
	if nodes < 1 || np%nodes != 0 {
		return nil, fmt.Errorf("--np %d does not split into --nodes %d equal nodes", np, nodes)
	}
	return topo.MeasuredTestbed(nodes, np/nodes, n.rails, n.rate, n.alpha)
}

// predictTopology is the topology a --mem cuda testbed run's prediction
// simulates its plans on (bench.Config.PredictTopo): the testbed's GPU
// form (topo.MeasuredGPUTestbed), whose ranks are GPUs joined by NVLink.
// Nil where the job's own topology is the right one: host memory, no
// --netns, or a --topo given.
func (f *benchFlags) predictTopology(np int) (*topo.Topology, error) {
	if !f.netns.on() || f.topo != "" || f.mem != "cuda" {
		return nil, nil
	}
	if f.nodes < 1 || np%f.nodes != 0 {
		return nil, fmt.Errorf("--np %d does not split into --nodes %d equal nodes", np, f.nodes)
	}
	return topo.MeasuredGPUTestbed(f.nodes, np/f.nodes, f.netns.rails, f.netns.rate, f.netns.alpha)
}

// benchTopology is the job's topology: the testbed's with --netns (unless
// --topo names another), else benchTopo's.
func (f *benchFlags) benchTopology(np int) (*topo.Topology, error) {
	if f.netns.on() && f.topo == "" {
		return f.netns.topology(f.nodes, np)
	}
	return benchTopo(f.topo, f.nodes, np)
}

// configureNetns makes the local job a testbed job (launch.OnTestbed)
// with --netns.
func configureNetns(lj *launch.LocalJob, f *benchFlags) {
	if f.netns.on() {
		lj.OnTestbed(f.netns.prefix, f.np/f.nodes)
	}
}

// writePredictions prints, below the table, the simulator's time for every
// row on the job's topology and how the measurement compares, like with
// like (bench.Prediction.Ratios): Measured is each rank's own time per
// call averaged over ranks, so PredAvg is each rank's simulated finish
// averaged over ranks and meas/pred their ratio; max/pred is the slowest
// rank's measured time over the simulated slowest (goring sim's time, the
// last rank's finish). The two differ where ranks finish far apart
// (leader, a hot destination's nimble). A row keeps four numbers, as
// TestBenchNetnsSmall and docs/contracts.md expect.
func writePredictions(out io.Writer, cfg bench.Config, rows []bench.Row) error {
	tp := cfg.Topo
	if cfg.PredictTopo != nil {
		tp = cfg.PredictTopo
	}
	fmt.Fprintf(out, "# prediction: goring sim on %s (rail %.4g GB/s, alpha %.3g us)\n", tp.Name, tp.Rails[0].BetaGBps, tp.Rails[0].AlphaUS)
	fmt.Fprintln(out, "# Measured, PredAvg: each rank's time per call, averaged over ranks; meas/pred = Measured / PredAvg; max/pred = slowest rank measured / slowest rank simulated")
	fmt.Fprintf(out, "%-16s %12s %14s %14s %10s %10s\n", "# Algorithm", "Size(B)", "Measured(us)", "PredAvg(us)", "meas/pred", "max/pred")
	for _, r := range rows {
		name := r.Algorithm
		if r.Lanes > 0 {
			name += "/L" + strconv.Itoa(r.Lanes)
		}
		pred, err := cfg.Predict(r.Algorithm, r.Bytes, r.Lanes)
		if err != nil {
			fmt.Fprintf(out, "%-16s %12d %14.2f %14s %10s %10s  (%v)\n", name, r.Bytes, r.AvgUS, "-", "-", "-", err)
			continue
		}
		avg, slowest := pred.Ratios(r)
		fmt.Fprintf(out, "%-16s %12d %14.2f %14.2f %10.3f %10.3f\n", name, r.Bytes, r.AvgUS, pred.MeanUS, avg, slowest)
	}
	return nil
}
