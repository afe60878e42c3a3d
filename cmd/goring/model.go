package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/topo"
	"github.com/goring-hpc/goring/units"
)

func init() { subcommands = append(subcommands, newModelCmd) }

func newModelCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "model",
		Short: "ask goring's models: how a transfer splits over paths (split), where the UCC team layer claims collectives (scores)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(newModelSplitCmd())
	for _, mk := range modelSubcommands {
		c.AddCommand(mk())
	}
	return c
}

// modelSubcommands holds the constructors of model's subcommands that live
// in files of their own.
var modelSubcommands []func() *cobra.Command

// modelSplitFlags are the flags of "goring model split".
type modelSplitFlags struct {
	spec     string
	src, dst int
	bytes    string
	paths    string
	exact    bool
	asJSON   bool
	calib    string
}

func newModelSplitCmd() *cobra.Command {
	var f modelSplitFlags
	c := &cobra.Command{
		Use:   "split --topo T --src A --dst B --bytes N [--paths direct,gpu,host] [--exact] [--json]",
		Short: "split one GPU-to-GPU transfer over the direct, GPU-staged and host-staged paths",
		Long: `split predicts how a transfer of --bytes from GPU --src to GPU --dst of the
topology's first node is best divided over the paths between them (Multi-path model,
Algorithm 1): the direct route, staging through each other GPU over NVLink
(gpu:K), and staging through host memory (host). Each row gives the path's
share (theta), its bytes, the chunks a staged path pipelines them in, and
when it finishes; the paths are launched one after another, direct first.
--exact uses the reference solver (bisection on the finish time, every
subset of paths, best whole chunk count) instead of the closed form.

--calibration FILE (goring calibrate --out) replaces the topology's figures
of the pair's direct and staged paths with the measured ones, and the split
then accounts for how the paths slow each other down when they run together
(the file's contention entries). The file must be for this kind of node
(GPU count and model) and must have measured the pair.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runModelSplit(cmd, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.spec, "topo", "", "preset name ("+strings.Join(topo.PresetNames(), ", ")+") or goring.topo/v1 JSON file")
	fl.IntVar(&f.src, "src", -1, "source GPU (local index)")
	fl.IntVar(&f.dst, "dst", -1, "destination GPU (local index)")
	fl.StringVar(&f.bytes, "bytes", "", "message size, e.g. 64MiB")
	fl.StringVar(&f.paths, "paths", "direct,gpu,host", "path families to consider: direct, gpu, host (comma-separated)")
	fl.BoolVar(&f.exact, "exact", false, "use the reference solver instead of the closed form")
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON document")
	fl.StringVar(&f.calib, "calibration", "", "goring.calibration/v1 file (goring calibrate --out): the pair's paths as measured and how they contend, instead of the topology's figures")
	return c
}

func runModelSplit(cmd *cobra.Command, f modelSplitFlags) error {
	if f.bytes == "" {
		return errors.New("--bytes is required")
	}
	n, err := units.ParseBytes(f.bytes)
	if err != nil {
		return fmt.Errorf("--bytes: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("--bytes %s: want at least 1 byte", f.bytes)
	}
	set, err := model.ParsePathSet(f.paths)
	if err != nil {
		return fmt.Errorf("--paths: %w", err)
	}
	if !cmd.Flags().Changed("src") || !cmd.Flags().Changed("dst") {
		return errors.New("--src and --dst are required (GPU indices within the node)")
	}
	t, err := loadTopo(f.spec, 0)
	if err != nil {
		return err
	}
	node := &t.Nodes[0]
	g := len(node.GPUs)
	for _, v := range [2]struct {
		flag string
		gpu  int
	}{{"--src", f.src}, {"--dst", f.dst}} {
		if v.gpu < 0 || v.gpu >= g {
			return fmt.Errorf("%s %d: out of range, topology %q has GPUs 0..%d", v.flag, v.gpu, t.Name, g-1)
		}
	}
	if f.src == f.dst {
		return fmt.Errorf("--src and --dst are both GPU %d: a transfer needs two GPUs", f.src)
	}
	sp, cal, err := splitterFor(t.Name, node, f)
	if err != nil {
		return err
	}
	s, err := sp.Split(f.src, f.dst, n, set, f.exact)
	if err != nil {
		return err
	}
	if f.asJSON {
		return writeSplitJSON(cmd.OutOrStdout(), s, f.calib)
	}
	thr, err := sp.Threshold(f.src, f.dst, set)
	if err != nil {
		return err
	}
	return writeSplitTable(cmd.OutOrStdout(), t.Name, f, s, thr, cal)
}

// splitterFor is the node's splitter: the topology's figures, or with
// --calibration the file's for the pairs it measured (and then the pair
// asked about must be one of them).
func splitterFor(topoName string, node *topo.Node, f modelSplitFlags) (*model.Splitter, *calib.Calibration, error) {
	if f.calib == "" {
		sp, err := model.NewSplitter(node, model.DefaultOptions())
		return sp, nil, err
	}
	cal, err := loadCalibration(f.calib)
	if err != nil {
		return nil, nil, err
	}
	sp, err := calib.NewSplitter(node, cal, model.DefaultOptions())
	if err != nil {
		return nil, nil, fmt.Errorf("--calibration %s: topology %s: %w", f.calib, topoName, err)
	}
	if !cal.Measured(f.src, f.dst) {
		pairs := cal.MeasuredPairs()
		if len(pairs) == 0 {
			return nil, nil, fmt.Errorf("--calibration %s: the file measured no GPU direct path (skipped: %s)", f.calib, strings.Join(cal.Skipped, "; "))
		}
		return nil, nil, fmt.Errorf("--calibration %s: no figures for GPU %d -> GPU %d (the file measured %s)", f.calib, f.src, f.dst, strings.Join(pairs, ", "))
	}
	return sp, cal, nil
}

// splitJSON is the JSON contract of "goring model split --json".
type splitJSON struct {
	Bytes        int64           `json:"bytes"`
	PredictedUS  float64         `json:"predicted_us"`
	DirectOnlyUS float64         `json:"direct_only_us"`
	Paths        []splitPathJSON `json:"paths"`
	// Calibration is the --calibration file the figures came from.
	Calibration string `json:"calibration,omitempty"`
}

type splitPathJSON struct {
	Path        string  `json:"path"`
	Theta       float64 `json:"theta"`
	Bytes       int64   `json:"bytes"`
	Chunks      int     `json:"chunks"`
	PredictedUS float64 `json:"predicted_us"`
	AlphaUS     float64 `json:"alpha_us"`
	BetaGBps    float64 `json:"beta_GBps"`
	Alpha2US    float64 `json:"alpha2_us"`
	Beta2GBps   float64 `json:"beta2_GBps"`
	EpsilonUS   float64 `json:"epsilon_us"`
	// Contention is a staged path's slowdowns beside the direct path, when
	// the calibration measured any.
	Contention *contentionJSON `json:"contention,omitempty"`
}

type contentionJSON struct {
	DirectSlowdown float64 `json:"direct_slowdown"`
	StagedSlowdown float64 `json:"staged_slowdown"`
}

func writeSplitJSON(w io.Writer, s model.Split, calibration string) error {
	doc := splitJSON{Bytes: s.Bytes, PredictedUS: s.PredictedUS, DirectOnlyUS: s.DirectOnlyUS, Paths: []splitPathJSON{}, Calibration: calibration}
	for _, sh := range s.Paths {
		p := sh.Path
		row := splitPathJSON{
			Path: p.Name, Theta: sh.Theta, Bytes: sh.Bytes, Chunks: sh.Chunks, PredictedUS: sh.PredictedUS,
			AlphaUS: p.Alpha1US, BetaGBps: p.Beta1GBps, Alpha2US: p.Alpha2US, Beta2GBps: p.Beta2GBps, EpsilonUS: p.EpsilonUS,
		}
		if c := p.Contention; p.Staged && c != (model.Contention{}) {
			row.Contention = &contentionJSON{DirectSlowdown: c.DirectSlowdown, StagedSlowdown: c.StagedSlowdown}
		}
		doc.Paths = append(doc.Paths, row)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func writeSplitTable(w io.Writer, topoName string, f modelSplitFlags, s model.Split, thrBytes int64, cal *calib.Calibration) error {
	solver := "closed form (Algorithm 1)"
	switch {
	case s.Exact:
		solver = "exact reference solver"
	case s.Cached:
		solver = "cached configuration"
	}
	fmt.Fprintf(w, "# %s gpu:%d -> gpu:%d, %s (%d bytes), paths %s, %s\n",
		topoName, f.src, f.dst, units.FormatBytes(s.Bytes), s.Bytes, f.paths, solver)
	if cal != nil {
		fmt.Fprintf(w, "# figures measured on %s (%s), --calibration %s\n", cal.Host, cal.Date, f.calib)
		for _, sh := range s.Paths {
			if c := sh.Path.Contention; sh.Path.Staged && c != (model.Contention{}) {
				fmt.Fprintf(w, "# while %s and direct both run: direct loses %.1f%% of its bandwidth, %s %.1f%% of its own\n",
					sh.Path.Name, 100*c.DirectSlowdown, sh.Path.Name, 100*c.StagedSlowdown)
			}
		}
	}
	rate := func(us float64) float64 { return float64(s.Bytes) / us / 1e3 }
	if s.DirectOnlyUS > 0 {
		fmt.Fprintf(w, "# predicted %.2f us (%.1f GB/s); direct path alone %.2f us (%.1f GB/s): %.2fx\n",
			s.PredictedUS, rate(s.PredictedUS), s.DirectOnlyUS, rate(s.DirectOnlyUS), s.DirectOnlyUS/s.PredictedUS)
	} else {
		fmt.Fprintf(w, "# predicted %.2f us (%.1f GB/s); no direct route\n", s.PredictedUS, rate(s.PredictedUS))
	}
	switch {
	case thrBytes == math.MaxInt64:
		fmt.Fprintln(w, "# splitting never pays for this pair: direct path only")
	case thrBytes > 0:
		fmt.Fprintf(w, "# below %d bytes (%.2f MiB) the direct path is used alone\n", thrBytes, float64(thrBytes)/(1<<20))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "path\ttheta\tbytes\tchunks\tstart_us\tpredicted_us\talpha_us\tbeta_GBps\talpha2_us\tbeta2_GBps\tepsilon_us\t")
	for _, sh := range s.Paths {
		p := sh.Path
		second := "-\t-\t-"
		if p.Staged {
			second = fmt.Sprintf("%.2f\t%.2f\t%.2f", p.Alpha2US, p.Beta2GBps, p.EpsilonUS)
		}
		fin := "-"
		if sh.Bytes > 0 {
			fin = fmt.Sprintf("%.2f", sh.PredictedUS)
		}
		fmt.Fprintf(tw, "%s\t%.4f\t%d\t%d\t%.2f\t%s\t%.2f\t%.2f\t%s\t\n",
			p.Name, sh.Theta, sh.Bytes, sh.Chunks, sh.StartUS, fin, p.Alpha1US, p.Beta1GBps, second)
	}
	return tw.Flush()
}
