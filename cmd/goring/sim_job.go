package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/schollz/progressbar/v3"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/sweep"
	"github.com/goring-hpc/goring/topo"
	"github.com/goring-hpc/goring/units"
)

// newSimJob checks the flags, in the order the CLI has always reported
// them, and loads the topology.
func newSimJob(collName string, f *simFlags) (*sweep.Job, error) {
	c, err := coll.ParseCollective(collName)
	if err != nil {
		return nil, err
	}
	if f.bytes == "" {
		return nil, fmt.Errorf("--bytes is required (N or a:b)")
	}
	sizes, err := units.ParseRange(f.bytes)
	if err != nil {
		return nil, fmt.Errorf("--bytes: %w", err)
	}
	for _, n := range sizes {
		if n <= 0 {
			return nil, fmt.Errorf("--bytes: %d: want a positive size", n)
		}
	}
	if err := checkSimFlags(f); err != nil {
		return nil, err
	}
	dt, err := coll.ParseDtype(f.dtype)
	if err != nil {
		return nil, fmt.Errorf("--dtype: %w", err)
	}
	t, err := loadTopo(f.topo, f.nodes)
	if err != nil {
		return nil, err
	}
	var notes []string
	if f.calib != "" {
		if t, notes, err = calibrateTopo(t, f.calib); err != nil {
			return nil, err
		}
	}
	algs, err := simAlgorithms(c, f.alg)
	if err != nil {
		return nil, err
	}
	counts, err := f.traffic.matrix(c, t.NumGPUs(), int64(dt.Size()))
	if err != nil {
		return nil, err
	}
	lanes, err := parseSimLanes(f.lanes, c, f.maxLanes)
	if err != nil {
		return nil, err
	}
	opt := sim.Options{CopyEngineSerial: f.serialCE}
	if lanes != nil {
		if f.alg == "auto" || f.gantt {
			return nil, fmt.Errorf("--lanes: give --alg a name or all (lanes are predicted per algorithm), and no --gantt")
		}
		if opt, err = laneOptions(opt, f); err != nil {
			return nil, err
		}
	}
	return &sweep.Job{Coll: c, Sizes: sizes, Algs: algs, Topo: t, Counts: counts, Lanes: lanes,
		Base: sched.Spec{Collective: c, Topo: t, Intra: f.intra, DtypeBytes: dt.Size(), Chunks: f.chunks},
		Opt:  opt, Notes: notes, RankAvg: f.rankAvg}, nil
}

// calibrateTopo is t with the figures a calibration file measured on the
// links its GPU paths crossed (calib.Calibration.CalibrateTopology), and
// one note per measured path.
func calibrateTopo(t *topo.Topology, file string) (*topo.Topology, []string, error) {
	cal, err := loadCalibration(file)
	if err != nil {
		return nil, nil, err
	}
	ct, notes, err := cal.CalibrateTopology(t)
	if err != nil {
		return nil, nil, fmt.Errorf("--calibration %s: topology %s: %w", file, t.Name, err)
	}
	return ct, notes, nil
}

// checkSimFlags checks the flags that need nothing loaded.
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
	case f.rankAvg && f.png != "":
		return fmt.Errorf("--rank-avg adds to the table and --json, not to --png")
	case strings.TrimSpace(f.lanes) == "" && (f.workerGBps != 0 || f.nodeCores != 0 || f.lanesOnRails):
		// They set the host worker model, which only --lanes turns on.
		return fmt.Errorf("--worker-gbps, --node-cores and --lanes-on-rails need --lanes (the host worker model)")
	}
	return nil
}

// simAlgorithms is --alg: one name, or every registered algorithm for all
// and auto (sweep.Algorithms).
func simAlgorithms(c coll.Collective, alg string) ([]string, error) {
	if alg == "" {
		return nil, fmt.Errorf("--alg is required (a name, all or auto)")
	}
	return sweep.Algorithms(c, alg)
}

// writeGantt draws the timeline of the job's one run into png.
func writeGantt(out io.Writer, j *sweep.Job, png string) error {
	if len(j.Algs) != 1 || len(j.Sizes) != 1 {
		return fmt.Errorf("--gantt draws one run: give one --alg and one --bytes")
	}
	res, plan, err := j.Timeline()
	if err != nil {
		return err
	}
	title := fmt.Sprintf("%s %s on %s, %d ranks, %s: %.1f us", j.Coll, j.Algs[0], j.Topo.Name, plan.NRanks, units.FormatBytes(j.Sizes[0]), res.TotalUS)
	if err := writeGanttPNG(png, title, plan, res); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s (%d steps, %.1f us, bottleneck %s)\n", png, len(res.Steps), res.TotalUS, res.Bottleneck)
	return nil
}

// simRunner is the job's runner, with a progress bar on stderr for long
// jobs (nil bar: none); the caller finishes the bar. The bar redraws in
// place with carriage returns, so it is drawn only on a terminal: in a
// log or a pipe it would be a line of debris before the table.
func simRunner(j *sweep.Job, stderr io.Writer, f *simFlags) (*sweep.Runner, *progressbar.ProgressBar) {
	s := j.NewRunner()
	runs := j.Runs(f.alg == "auto")
	if f.noProgress || len(j.Algs)*len(j.Sizes) <= 1 || !isTerminal(stderr) {
		return s, nil
	}
	bar := progressbar.NewOptions(runs, progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription("simulating"), progressbar.OptionClearOnFinish(),
		progressbar.OptionShowCount(), progressbar.OptionThrottle(200_000_000))
	s.OnRun = func() { _ = bar.Add(1) }
	return s, bar
}

// writeSimDoc prints the results as JSON, a plot or the OSU-style table.
func writeSimDoc(out io.Writer, f *simFlags, doc *sweep.Doc) error {
	switch {
	case f.json:
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(doc)
	case f.png != "":
		if err := writeLatencyPNG(f.png, doc); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s\n", f.png)
		return nil
	}
	for _, n := range doc.Calibration {
		fmt.Fprintf(out, "# calibration: %s\n", n)
	}
	printSimTable(out, doc, f.alg == "auto" || strings.TrimSpace(f.lanes) == "auto", strings.TrimSpace(f.lanes) == "auto")
	return nil
}
