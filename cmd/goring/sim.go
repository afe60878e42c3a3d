package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sweep"
)

func init() { subcommands = append(subcommands, newSimCmd) }

type simFlags struct {
	traffic                             trafficFlags
	moe                                 moeFlags
	alg, topo, bytes, intra, png, dtype string
	calib                               string
	lanes                               string  // --lanes (sim_lanes.go)
	workerGBps                          float64 // --worker-gbps
	nodeCores, maxLanes                 int
	lanesOnRails                        bool
	nodes, chunks                       int
	json, gantt, serialCE, noProgress   bool
	rankAvg                             bool // --rank-avg: rows carry the ranks' average finish too
}

func newSimCmd() *cobra.Command {
	var f simFlags
	cmd := &cobra.Command{
		Use:   "sim COLL",
		Short: "predict a collective's latency with the flow-level simulator",
		Long: `sim generates the programs of an algorithm (package sched) and runs them
through the flow-level simulator (package sim) over a topology. It prints an
OSU-style table: per size, the predicted latency of each algorithm in us and
its bus bandwidth in GB/s as nccl-tests defines it (allgather and
reduce_scatter: algbw*(P-1)/P with algbw = bytes*P/time; allreduce:
algbw*2(P-1)/P with algbw = bytes/time; bcast: algbw).

--alg all runs every registered algorithm; --alg auto runs, per size, what
goring runs (choose.Auto) with a rank per GPU on device memory: the measured
table's row where it has one for the shape (one host), else the fastest by
the simulator's cost table (model.CostTable). --png draws latency
versus size, or with --gantt the timeline of one run (one algorithm, one size).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.traffic.observe(cmd)
			f.moe.observe(cmd)
			return runSim(cmd, args[0], &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.alg, "alg", "all", "algorithm name, all, or auto")
	fl.StringVar(&f.topo, "topo", "", "topology preset or goring.topo/v1 file")
	fl.IntVar(&f.nodes, "nodes", 0, "repeat the preset's node N times")
	fl.StringVar(&f.bytes, "bytes", "", "size N, OSU-style range a:b, or a comma list of either (UCC's meaning per collective)")
	fl.StringVar(&f.intra, "intra", "", "intra-node phase of parallel_rings (linear, btdd, btddh, knomial, iallgather_linear, rd, congestion_aware, auto)")
	fl.IntVar(&f.chunks, "chunks", 0, "split long transfers into K pipelined pieces")
	fl.StringVar(&f.dtype, "dtype", "float32", "element type (reductions, and the element size of every plan)")
	fl.BoolVar(&f.json, "json", false, "print one JSON document")
	fl.StringVar(&f.png, "png", "", "draw latency versus size (or a Gantt timeline with --gantt) into FILE")
	fl.BoolVar(&f.gantt, "gantt", false, "with --png: draw the timeline of one run")
	fl.BoolVar(&f.serialCE, "serial-ce", false, "each GPU's copy engine sends one intra-node transfer at a time")
	fl.BoolVar(&f.rankAvg, "rank-avg", false, "also predict each rank's finish averaged over ranks (what goring bench --netns's Measured averages; the latency column is the last rank's): an avg(us) column per algorithm, predicted_avg_us in --json")
	fl.BoolVar(&f.noProgress, "no-progress", false, "no progress bar on stderr")
	fl.StringVar(&f.calib, "calibration", "", "goring.calibration/v1 file: the links it measured take its figures instead of the topology's")
	fl.StringVar(&f.lanes, "lanes", "", "lanes per rank (Multi-lane): a count, a comma list, or auto (the fewest lanes within 5% of the best, over 1..--max-lanes); turns on the host worker model")
	fl.Float64Var(&f.workerGBps, "worker-gbps", 0, "with --lanes: the rate of one lane's host worker, GB/s (default sim.DefaultWorkerGBps)")
	fl.IntVar(&f.nodeCores, "node-cores", 0, "with --lanes: CPU cores a node's workers share (0: unlimited)")
	fl.IntVar(&f.maxLanes, "max-lanes", 8, "with --lanes auto: the most lanes tried")
	fl.BoolVar(&f.lanesOnRails, "lanes-on-rails", false, "with --lanes: lane w's inter-node traffic takes rail w (a UCX worker bound to each rail)")
	f.traffic.register(fl)
	f.moe.register(fl)
	return cmd
}

// runSim validates the invocation, then draws one timeline (--gantt) or
// simulates every (algorithm, size) and prints the table, JSON or plot.
func runSim(cmd *cobra.Command, collName string, f *simFlags) error {
	if c, err := coll.ParseCollective(collName); err == nil && (c.Routed() || len(f.moe.set) > 0) {
		return runSimMoE(cmd, c, f)
	}
	j, err := newSimJob(collName, f)
	if err != nil {
		return err
	}
	if err := checkOutFile("--png", f.png); err != nil {
		return err
	}
	if f.gantt {
		return writeGantt(cmd.OutOrStdout(), j, f.png)
	}
	s, bar := simRunner(j, cmd.ErrOrStderr(), f)
	var doc *sweep.Doc
	if j.Lanes != nil {
		doc, err = j.LaneResults(s)
	} else {
		doc, err = j.Results(s, f.alg == "auto")
	}
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	return writeSimDoc(cmd.OutOrStdout(), f, doc)
}

// printSimTable prints the OSU-style table: one row per size, a latency and
// a bus bandwidth column per algorithm ("-" where it cannot run).
func printSimTable(w io.Writer, doc *sweep.Doc, auto, lanesAuto bool) {
	var algs []string
	seen := map[string]bool{}
	for _, r := range doc.Results {
		if l := simLabel(r, lanesAuto); !seen[l] {
			seen[l] = true
			algs = append(algs, l)
		}
	}
	fmt.Fprintf(w, "# goring sim %s on %s: %d nodes, %d ranks (predicted; busbw as nccl-tests)\n", doc.Collective, doc.Topology, doc.Nodes, doc.NRanks)
	if doc.WorkerGBps > 0 {
		fmt.Fprintf(w, "# lanes: one host worker per lane at %g GB/s, %d cores per node (0: unlimited)\n", doc.WorkerGBps, doc.NodeCores)
	}
	rankAvg := slices.ContainsFunc(doc.Results, func(r sweep.Row) bool { return r.PredictedAvgUS != nil })
	// A latency column is as wide as its label where that is longer than
	// the 20 its numbers take ("recursive_doubling/L2(us)"), so that rows
	// stay under their header.
	width := make([]int, len(algs))
	fmt.Fprintf(w, "%-12s", "# Size")
	for i, a := range algs {
		width[i] = max(20, len(a)+len("(us)"))
		fmt.Fprintf(w, " %*s %12s", width[i], a+"(us)", "busbw(GB/s)")
		if rankAvg {
			fmt.Fprintf(w, " %14s", "avg(us)")
		}
	}
	if auto {
		fmt.Fprintf(w, "  %s", "chosen")
	}
	fmt.Fprintln(w)
	byKey := map[string]sweep.Row{}
	var sizes []int64
	for _, r := range doc.Results {
		k := fmt.Sprint(simLabel(r, lanesAuto), "@", r.Bytes)
		byKey[k] = r
		if len(sizes) == 0 || sizes[len(sizes)-1] != r.Bytes {
			sizes = append(sizes, r.Bytes)
		}
	}
	var errs []string
	for _, n := range sizes {
		fmt.Fprintf(w, "%-12d", n)
		chosen := ""
		for i, a := range algs {
			r := byKey[fmt.Sprint(a, "@", n)]
			if r.PredictedUS == nil {
				fmt.Fprintf(w, " %*s %12s", width[i], "-", "-")
				if rankAvg {
					fmt.Fprintf(w, " %14s", "-")
				}
				if r.Error != "" && len(errs) < 8 && !contains(errs, r.Error) {
					errs = append(errs, r.Error)
				}
				continue
			}
			bw := 0.0
			if r.BusBWGBps != nil {
				bw = *r.BusBWGBps
			}
			fmt.Fprintf(w, " %*.2f %12.2f", width[i], *r.PredictedUS, bw)
			if rankAvg {
				fmt.Fprintf(w, " %14.2f", *r.PredictedAvgUS)
			}
			chosen = r.Chosen
		}
		if auto {
			fmt.Fprintf(w, "  %s", chosen)
		}
		fmt.Fprintln(w)
	}
	for _, e := range errs {
		fmt.Fprintf(w, "# not run: %s\n", e)
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
