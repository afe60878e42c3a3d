package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/topo"
	"github.com/goring-hpc/goring/units"
)

func init() { subcommands = append(subcommands, newSimCmd) }

type simFlags struct {
	traffic                             trafficFlags
	alg, topo, bytes, intra, png, dtype string
	calibration                         string
	nodes, chunks                       int
	json, gantt, serialCE, noProgress   bool
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

--alg all runs every registered algorithm; --alg auto picks, per size, the
fastest by the simulator's cost table (model.CostTable). --png draws latency
versus size, or with --gantt the timeline of one run (one algorithm, one size).

--calibration FILE (goring calibrate --out) replaces the topology's figures of
the links the file's GPU paths crossed with the measured ones
(model.Calibration.CalibrateTopology): a preset's link figures are data-sheet
rates, and predictions for a real machine should come from what its copies
measured. The file must be for this kind of node (GPU count and model).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.traffic.observe(cmd)
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
	fl.BoolVar(&f.noProgress, "no-progress", false, "no progress bar on stderr")
	fl.StringVar(&f.calibration, "calibration", "", "goring.calibration/v1 file: measured figures for the links its paths crossed")
	f.traffic.register(fl)
	return cmd
}

// simRow is one (algorithm, size) result of the JSON output.
type simRow struct {
	Algorithm   string   `json:"algorithm"`
	Chosen      string   `json:"chosen,omitempty"` // what auto picked
	Bytes       int64    `json:"bytes"`
	PredictedUS *float64 `json:"predicted_us,omitempty"`
	BusBWGBps   *float64 `json:"busbw_GBps,omitempty"`
	Bottleneck  string   `json:"bottleneck,omitempty"`
	Error       string   `json:"error,omitempty"`
}

type simDoc struct {
	Collective string `json:"collective"`
	Topology   string `json:"topology"`
	Nodes      int    `json:"nodes"`
	NRanks     int    `json:"nranks"`
	// Calibration is the --calibration file, and CalibratedLinks what it
	// changed: one line per link of a node, old and new figures.
	Calibration     string   `json:"calibration,omitempty"`
	CalibratedLinks []string `json:"calibrated_links,omitempty"`
	Results         []simRow `json:"results"`
}

// runSim runs the steps of goring sim: check the flags and load what they
// name, then either draw one run's timeline or simulate every (algorithm,
// size) and print the results.
func runSim(cmd *cobra.Command, collName string, f *simFlags) error {
	s, err := newSimSetup(collName, f)
	if err != nil {
		return err
	}
	if f.gantt {
		return runSimGantt(cmd.OutOrStdout(), s, f)
	}
	runs := newSimRuns(s, simProgress(cmd.ErrOrStderr(), f, len(s.algs)*len(s.sizes)))
	doc, err := s.simulate(runs, f)
	if err != nil {
		return err
	}
	return writeSimDoc(cmd.OutOrStdout(), f, doc)
}

// simSetup is what goring sim needs once its flags are checked: the
// collective, the sizes, the topology, the algorithms, and how to build
// the spec of one (algorithm, size).
type simSetup struct {
	coll  coll.Collective
	sizes []int64
	dtype coll.Dtype
	topo  *topo.Topology
	algs  []string
	// notes says which link figures --calibration replaced.
	notes []string
	base  sched.Spec
	// counts gives alltoallv's byte matrix for a size (nil otherwise).
	counts func(int64) ([][]int64, error)
	opt    sim.Options
}

// newSimSetup checks the flags and loads the topology and algorithms they
// name.
func newSimSetup(collName string, f *simFlags) (*simSetup, error) {
	c, err := coll.ParseCollective(collName)
	if err != nil {
		return nil, err
	}
	s := &simSetup{coll: c}
	if s.sizes, err = simSizes(f.bytes); err != nil {
		return nil, err
	}
	if err := checkSimFlags(f); err != nil {
		return nil, err
	}
	if s.dtype, err = coll.ParseDtype(f.dtype); err != nil {
		return nil, fmt.Errorf("--dtype: %w", err)
	}
	if s.topo, err = loadTopo(f.topo, f.nodes); err != nil {
		return nil, err
	}
	if f.calibration != "" {
		cal, err := loadCalibration(f.calibration)
		if err != nil {
			return nil, err
		}
		t, notes, err := cal.CalibrateTopology(s.topo)
		if err != nil {
			return nil, fmt.Errorf("--calibration %s: topology %s: %w", f.calibration, s.topo.Name, err)
		}
		s.topo, s.notes = t, notes
	}
	if s.algs, err = simAlgorithms(c, f.alg); err != nil {
		return nil, err
	}
	if s.counts, err = f.traffic.matrix(c, s.topo.NumGPUs(), int64(s.dtype.Size())); err != nil {
		return nil, err
	}
	s.base = sched.Spec{Collective: c, Topo: s.topo, Intra: f.intra, DtypeBytes: s.dtype.Size(), Chunks: f.chunks}
	s.opt = sim.Options{CopyEngineSerial: f.serialCE}
	return s, nil
}

// simSizes reads --bytes: one or more positive sizes.
func simSizes(bytes string) ([]int64, error) {
	if bytes == "" {
		return nil, fmt.Errorf("--bytes is required (N or a:b)")
	}
	sizes, err := units.ParseRange(bytes)
	if err != nil {
		return nil, fmt.Errorf("--bytes: %w", err)
	}
	for _, n := range sizes {
		if n <= 0 {
			return nil, fmt.Errorf("--bytes: %d: want a positive size", n)
		}
	}
	return sizes, nil
}

// checkSimFlags checks the flags that do not need the topology.
func checkSimFlags(f *simFlags) error {
	switch {
	case f.nodes < 0:
		return fmt.Errorf("--nodes %d: want at least 1", f.nodes)
	case f.chunks < 0:
		return fmt.Errorf("--chunks %d: want 0 or more", f.chunks)
	case f.json && f.png != "":
		return fmt.Errorf("--json and --png exclude each other")
	case f.gantt && f.png == "":
		return fmt.Errorf("--gantt draws into the --png file: give --png FILE")
	}
	return nil
}

// simAlgorithms resolves --alg: one registered algorithm, or all of the
// collective's for "all" and "auto".
func simAlgorithms(c coll.Collective, alg string) ([]string, error) {
	switch alg {
	case "all", "auto":
		var algs []string
		for _, a := range sched.Algorithms(c) {
			algs = append(algs, a.Name)
		}
		if len(algs) == 0 {
			return nil, fmt.Errorf("no %s algorithms are registered yet", c)
		}
		return algs, nil
	case "":
		return nil, fmt.Errorf("--alg is required (a name, all or auto)")
	}
	if _, err := sched.Lookup(c, alg); err != nil {
		return nil, err
	}
	return []string{alg}, nil
}

// spec is the spec of one (algorithm, size): alltoallv's matrix follows
// the size.
func (s *simSetup) spec(alg string, bytes int64) (sched.Spec, error) {
	spec := s.base
	spec.Algorithm, spec.Bytes = alg, bytes
	if s.counts != nil {
		m, err := s.counts(bytes)
		if err != nil {
			return spec, err
		}
		spec.Counts = m
	}
	return spec, nil
}

// runSimGantt simulates one run with its timeline and draws it.
func runSimGantt(w io.Writer, s *simSetup, f *simFlags) error {
	if len(s.algs) != 1 || len(s.sizes) != 1 {
		return fmt.Errorf("--gantt draws one run: give one --alg and one --bytes")
	}
	spec, err := s.spec(s.algs[0], s.sizes[0])
	if err != nil {
		return err
	}
	opt := s.opt
	opt.Timeline = true
	res, plan, err := sim.Run(spec, opt)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("%s %s on %s, %d ranks, %s: %.1f us", s.coll, s.algs[0], s.topo.Name, plan.NRanks, units.FormatBytes(s.sizes[0]), res.TotalUS)
	if err := writeGanttPNG(f.png, title, plan, res); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s (%d steps, %.1f us, bottleneck %s)\n", f.png, len(res.Steps), res.TotalUS, res.Bottleneck)
	return nil
}

// simProgress is the progress bar on stderr for runs simulations (nil for
// one run or with --no-progress); with --alg auto the count is unknown.
func simProgress(w io.Writer, f *simFlags, runs int) *progressbar.ProgressBar {
	if f.noProgress || runs <= 1 {
		return nil
	}
	if f.alg == "auto" {
		runs = -1 // the cost table decides how many runs it needs
	}
	return progressbar.NewOptions(runs, progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("simulating"), progressbar.OptionClearOnFinish(),
		progressbar.OptionShowCount(), progressbar.OptionThrottle(200_000_000))
}

// writeSimDoc prints the document as --json, --png or the table asks.
func writeSimDoc(w io.Writer, f *simFlags, doc *simDoc) error {
	switch {
	case f.json:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(doc)
	case f.png != "":
		if err := writeLatencyPNG(f.png, doc); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s\n", f.png)
		return nil
	}
	printSimTable(w, doc, f.alg == "auto")
	return nil
}

// printSimTable prints the OSU-style table: one row per size, a latency and
// a bus bandwidth column per algorithm ("-" where it cannot run).
func printSimTable(w io.Writer, doc *simDoc, auto bool) {
	var algs []string
	seen := map[string]bool{}
	for _, r := range doc.Results {
		if !seen[r.Algorithm] {
			seen[r.Algorithm] = true
			algs = append(algs, r.Algorithm)
		}
	}
	fmt.Fprintf(w, "# goring sim %s on %s: %d nodes, %d ranks (predicted; busbw as nccl-tests)\n", doc.Collective, doc.Topology, doc.Nodes, doc.NRanks)
	for _, l := range doc.CalibratedLinks {
		fmt.Fprintf(w, "# measured (--calibration %s): %s\n", doc.Calibration, l)
	}
	fmt.Fprintf(w, "%-12s", "# Size")
	for _, a := range algs {
		fmt.Fprintf(w, " %20s %12s", a+"(us)", "busbw(GB/s)")
	}
	if auto {
		fmt.Fprintf(w, "  %s", "chosen")
	}
	fmt.Fprintln(w)
	byKey := map[string]simRow{}
	var sizes []int64
	for _, r := range doc.Results {
		k := fmt.Sprint(r.Algorithm, "@", r.Bytes)
		byKey[k] = r
		if len(sizes) == 0 || sizes[len(sizes)-1] != r.Bytes {
			sizes = append(sizes, r.Bytes)
		}
	}
	var errs []string
	for _, n := range sizes {
		fmt.Fprintf(w, "%-12d", n)
		chosen := ""
		for _, a := range algs {
			r := byKey[fmt.Sprint(a, "@", n)]
			if r.PredictedUS == nil {
				fmt.Fprintf(w, " %20s %12s", "-", "-")
				if r.Error != "" && len(errs) < 8 && !contains(errs, r.Error) {
					errs = append(errs, r.Error)
				}
				continue
			}
			bw := 0.0
			if r.BusBWGBps != nil {
				bw = *r.BusBWGBps
			}
			fmt.Fprintf(w, " %20.2f %12.2f", *r.PredictedUS, bw)
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
