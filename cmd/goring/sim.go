package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/units"
)

func init() { subcommands = append(subcommands, newSimCmd) }

type simFlags struct {
	traffic                             trafficFlags
	alg, topo, bytes, intra, png, dtype string
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
versus size, or with --gantt the timeline of one run (one algorithm, one size).`,
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
	Collective string   `json:"collective"`
	Topology   string   `json:"topology"`
	Nodes      int      `json:"nodes"`
	NRanks     int      `json:"nranks"`
	Results    []simRow `json:"results"`
}

func runSim(cmd *cobra.Command, collName string, f *simFlags) error {
	c, err := coll.ParseCollective(collName)
	if err != nil {
		return err
	}
	if f.bytes == "" {
		return fmt.Errorf("--bytes is required (N or a:b)")
	}
	sizes, err := units.ParseRange(f.bytes)
	if err != nil {
		return fmt.Errorf("--bytes: %w", err)
	}
	for _, n := range sizes {
		if n <= 0 {
			return fmt.Errorf("--bytes: %d: want a positive size", n)
		}
	}
	if f.nodes < 0 {
		return fmt.Errorf("--nodes %d: want at least 1", f.nodes)
	}
	if f.chunks < 0 {
		return fmt.Errorf("--chunks %d: want 0 or more", f.chunks)
	}
	if f.json && f.png != "" {
		return fmt.Errorf("--json and --png exclude each other")
	}
	if f.gantt && f.png == "" {
		return fmt.Errorf("--gantt draws into the --png file: give --png FILE")
	}
	dt, err := coll.ParseDtype(f.dtype)
	if err != nil {
		return fmt.Errorf("--dtype: %w", err)
	}
	t, err := loadTopo(f.topo, f.nodes)
	if err != nil {
		return err
	}
	var algs []string
	switch f.alg {
	case "all", "auto":
		for _, a := range sched.Algorithms(c) {
			algs = append(algs, a.Name)
		}
		if len(algs) == 0 {
			return fmt.Errorf("no %s algorithms are registered yet", c)
		}
	case "":
		return fmt.Errorf("--alg is required (a name, all or auto)")
	default:
		if _, err := sched.Lookup(c, f.alg); err != nil {
			return err
		}
		algs = []string{f.alg}
	}
	counts, err := f.traffic.matrix(c, t.NumGPUs(), int64(dt.Size()))
	if err != nil {
		return err
	}
	base := sched.Spec{Collective: c, Topo: t, Intra: f.intra, DtypeBytes: dt.Size(), Chunks: f.chunks}
	// withSize is the spec of one (algorithm, size): alltoallv's matrix
	// follows the size.
	withSize := func(alg string, bytes int64) (sched.Spec, error) {
		spec := base
		spec.Algorithm, spec.Bytes = alg, bytes
		if counts != nil {
			m, err := counts(bytes)
			if err != nil {
				return spec, err
			}
			spec.Counts = m
		}
		return spec, nil
	}
	opt := sim.Options{CopyEngineSerial: f.serialCE}

	if f.gantt {
		if len(algs) != 1 || len(sizes) != 1 {
			return fmt.Errorf("--gantt draws one run: give one --alg and one --bytes")
		}
		spec, err := withSize(algs[0], sizes[0])
		if err != nil {
			return err
		}
		opt.Timeline = true
		res, plan, err := sim.Run(spec, opt)
		if err != nil {
			return err
		}
		title := fmt.Sprintf("%s %s on %s, %d ranks, %s: %.1f us", c, algs[0], t.Name, plan.NRanks, units.FormatBytes(sizes[0]), res.TotalUS)
		if err := writeGanttPNG(f.png, title, plan, res); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%d steps, %.1f us, bottleneck %s)\n", f.png, len(res.Steps), res.TotalUS, res.Bottleneck)
		return nil
	}

	runs := len(algs) * len(sizes)
	var bar *progressbar.ProgressBar
	if !f.noProgress && runs > 1 {
		if f.alg == "auto" {
			runs = -1 // the cost table decides how many runs it needs
		}
		bar = progressbar.NewOptions(runs, progressbar.OptionSetWriter(cmd.ErrOrStderr()),
			progressbar.OptionSetDescription("simulating"), progressbar.OptionClearOnFinish(),
			progressbar.OptionShowCount(), progressbar.OptionThrottle(200_000_000))
	}
	// Every (algorithm, size) is simulated at most once; bottlenecks are
	// kept for the output.
	type memo struct {
		us         float64
		err        error
		bottleneck string
	}
	memos := map[string]memo{}
	run := func(alg string, bytes int64) memo {
		k := fmt.Sprint(alg, "@", bytes)
		if m, ok := memos[k]; ok {
			return m
		}
		m := memo{}
		spec, err := withSize(alg, bytes)
		if err == nil {
			var res *sim.Result
			if res, _, err = sim.Run(spec, opt); err == nil {
				m.us, m.bottleneck = res.TotalUS, res.Bottleneck
			}
		}
		m.err = err
		if bar != nil {
			_ = bar.Add(1)
		}
		memos[k] = m
		return m
	}
	predict := func(alg string, bytes int64) (float64, error) {
		m := run(alg, bytes)
		return m.us, m.err
	}
	// auto asks the cost table (what the UCC layer uses) for the fastest
	// algorithm; the table samples powers of two and interpolates between.
	// Options change predictions, so they are part of the table's key.
	key := fmt.Sprintf("%s intra=%s chunks=%d dtype=%d serialce=%t", model.CostTableKey(t), f.intra, f.chunks, dt.Size(), f.serialCE)
	table := model.NewCostTable(string(c), key, algs, predict)

	doc := simDoc{Collective: string(c), Topology: t.Name, Nodes: t.NumNodes(), NRanks: t.NumGPUs()}
	row := func(alg string, n int64) simRow {
		r := simRow{Algorithm: alg, Bytes: n}
		m := run(alg, n)
		if m.err != nil {
			r.Error = m.err.Error()
			return r
		}
		us := m.us
		r.PredictedUS = &us
		if bw, err := sim.BusBandwidthGBps(c, doc.NRanks, n, us); err == nil {
			r.BusBWGBps = &bw
		}
		r.Bottleneck = m.bottleneck
		return r
	}
	for _, n := range sizes {
		if f.alg == "auto" {
			best, _, err := table.Best(n)
			if err != nil {
				doc.Results = append(doc.Results, simRow{Algorithm: "auto", Bytes: n, Error: err.Error()})
				continue
			}
			r := row(best, n)
			r.Algorithm, r.Chosen = "auto", best
			doc.Results = append(doc.Results, r)
			continue
		}
		for _, a := range algs {
			r := row(a, n)
			if r.Error != "" && len(algs) == 1 {
				return fmt.Errorf("%s %s at %d bytes: %s", c, a, n, r.Error)
			}
			doc.Results = append(doc.Results, r)
		}
	}
	if bar != nil {
		_ = bar.Finish()
	}
	predicted := 0
	for _, r := range doc.Results {
		if r.PredictedUS != nil {
			predicted++
		}
	}
	if predicted == 0 && len(doc.Results) > 0 {
		// Nothing could run: an error, not a table of dashes.
		return fmt.Errorf("%s on %s: no algorithm can run: %s", c, t.Name, doc.Results[0].Error)
	}
	switch {
	case f.json:
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(doc)
	case f.png != "":
		if err := writeLatencyPNG(f.png, &doc); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", f.png)
		return nil
	}
	printSimTable(cmd.OutOrStdout(), &doc, f.alg == "auto")
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
