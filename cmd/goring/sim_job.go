package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/schollz/progressbar/v3"

	"github.com/goring-hpc/goring/choose"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sim"
	"github.com/goring-hpc/goring/topo"
	"github.com/goring-hpc/goring/units"
)

// simJob is a validated goring sim invocation: what to simulate, over
// which topology, with which options.
type simJob struct {
	c      coll.Collective
	sizes  []int64
	algs   []string
	topo   *topo.Topology
	counts func(bytes int64) ([][]int64, error) // alltoallv's matrix per size; nil otherwise
	base   sched.Spec
	opt    sim.Options
	key    string   // what the cost table's predictions depend on
	notes  []string // what --calibration changed
	lanes  *simLanes
}

// newSimJob checks the flags, in the order the CLI has always reported
// them, and loads the topology.
func newSimJob(collName string, f *simFlags) (*simJob, error) {
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
	return &simJob{c: c, sizes: sizes, algs: algs, topo: t, counts: counts, lanes: lanes,
		base: sched.Spec{Collective: c, Topo: t, Intra: f.intra, DtypeBytes: dt.Size(), Chunks: f.chunks},
		opt:  opt,
		// Options change predictions, so they are part of the table's key.
		key:   fmt.Sprintf("%s intra=%s chunks=%d dtype=%d serialce=%t calibration=%q", model.CostTableKey(t), f.intra, f.chunks, dt.Size(), f.serialCE, notes),
		notes: notes}, nil
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
	}
	return nil
}

// simAlgorithms is --alg: one name, or every registered algorithm for all
// and auto.
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

// spec is the plan spec of one (algorithm, size): alltoallv's matrix
// follows the size.
func (j *simJob) spec(alg string, bytes int64) (sched.Spec, error) {
	spec := j.base
	spec.Algorithm, spec.Bytes = alg, bytes
	if j.counts != nil {
		m, err := j.counts(bytes)
		if err != nil {
			return spec, err
		}
		spec.Counts = m
	}
	return spec, nil
}

// gantt draws the timeline of the job's one run into png.
func (j *simJob) gantt(out io.Writer, png string) error {
	if len(j.algs) != 1 || len(j.sizes) != 1 {
		return fmt.Errorf("--gantt draws one run: give one --alg and one --bytes")
	}
	spec, err := j.spec(j.algs[0], j.sizes[0])
	if err != nil {
		return err
	}
	opt := j.opt
	opt.Timeline = true
	res, plan, err := sim.Run(spec, opt)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("%s %s on %s, %d ranks, %s: %.1f us", j.c, j.algs[0], j.topo.Name, plan.NRanks, units.FormatBytes(j.sizes[0]), res.TotalUS)
	if err := writeGanttPNG(png, title, plan, res); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s (%d steps, %.1f us, bottleneck %s)\n", png, len(res.Steps), res.TotalUS, res.Bottleneck)
	return nil
}

// simRun is one simulated (algorithm, size).
type simRun struct {
	us         float64
	err        error
	bottleneck string
	counts     [][]int64 // alltoallv's matrix, for the bus bandwidth
}

// simulator runs each (algorithm, size) at most once, keeping bottlenecks
// for the output, with a progress bar on stderr for long jobs.
type simulator struct {
	j     *simJob
	bar   *progressbar.ProgressBar
	memos map[string]simRun
}

func (j *simJob) simulator(stderr io.Writer, f *simFlags) *simulator {
	s := &simulator{j: j, memos: map[string]simRun{}}
	runs := len(j.algs) * len(j.sizes)
	if !f.noProgress && runs > 1 {
		if f.alg == "auto" {
			runs = -1 // the cost table decides how many runs it needs
		}
		s.bar = progressbar.NewOptions(runs, progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription("simulating"), progressbar.OptionClearOnFinish(),
			progressbar.OptionShowCount(), progressbar.OptionThrottle(200_000_000))
	}
	return s
}

func (s *simulator) run(alg string, bytes int64) simRun {
	return s.memo(fmt.Sprint(alg, "@", bytes), alg, bytes, func(spec sched.Spec) (*sim.Result, error) {
		res, _, err := sim.Run(spec, s.j.opt)
		return res, err
	})
}

// memo runs (alg, bytes) through simulate once per key: the result, or the
// error, is kept, and the progress bar counts the run.
func (s *simulator) memo(k, alg string, bytes int64, simulate func(sched.Spec) (*sim.Result, error)) simRun {
	if m, ok := s.memos[k]; ok {
		return m
	}
	var m simRun
	spec, err := s.j.spec(alg, bytes)
	if err == nil {
		m.counts = spec.Counts
		var res *sim.Result
		if res, err = simulate(spec); err == nil {
			m.us, m.bottleneck = res.TotalUS, res.Bottleneck
		}
	}
	m.err = err
	if s.bar != nil {
		_ = s.bar.Add(1)
	}
	s.memos[k] = m
	return m
}

// row is the output row of one (algorithm, size).
func (s *simulator) row(alg string, n int64) simRow {
	r := simRow{Algorithm: alg, Bytes: n}
	m := s.run(alg, n)
	if m.err != nil {
		r.Error = m.err.Error()
		return r
	}
	us := m.us
	r.PredictedUS = &us
	if bw, err := coll.BusBandwidthGBps(s.j.c, s.j.topo.NumGPUs(), n, m.counts, us); err == nil {
		r.BusBWGBps = &bw
	}
	r.Bottleneck = m.bottleneck
	return r
}

// results simulates every size: each algorithm, or (auto) goring's one
// choice (choose.Auto) on the topology as the team layer would see it: the
// measured table's row where it has one, else the cheapest by this job's
// cost table, which samples powers of two and interpolates between.
func (j *simJob) results(s *simulator, auto bool) (*simDoc, error) {
	table := model.NewCostTable(string(j.c), j.key, j.algs, func(alg string, bytes int64) (float64, error) {
		m := s.run(alg, bytes)
		return m.us, m.err
	})
	doc := &simDoc{Collective: string(j.c), Topology: j.topo.Name, Nodes: j.topo.NumNodes(), NRanks: j.topo.NumGPUs(), Calibration: j.notes}
	for _, n := range j.sizes {
		if auto {
			ch, err := choose.Auto(choose.OnTopology(j.c, n, j.topo), table)
			if err != nil {
				doc.Results = append(doc.Results, simRow{Algorithm: "auto", Bytes: n, Error: err.Error()})
				continue
			}
			r := s.row(ch.Alg, n)
			if r.Error != "" && ch.Fallback != "" {
				ch.Alg = ch.Fallback
				r = s.row(ch.Alg, n)
			}
			r.Algorithm, r.Chosen = "auto", ch.Alg
			doc.Results = append(doc.Results, r)
			continue
		}
		for _, a := range j.algs {
			r := s.row(a, n)
			if r.Error != "" && len(j.algs) == 1 {
				return nil, fmt.Errorf("%s %s at %d bytes: %s", j.c, a, n, r.Error)
			}
			doc.Results = append(doc.Results, r)
		}
	}
	for _, r := range doc.Results {
		if r.PredictedUS != nil {
			return doc, nil
		}
	}
	if len(doc.Results) > 0 { // nothing could run: an error, not a table of dashes
		return nil, fmt.Errorf("%s on %s: no algorithm can run: %s", j.c, j.topo.Name, doc.Results[0].Error)
	}
	return doc, nil
}

// writeSimDoc prints the results as JSON, a plot or the OSU-style table.
func writeSimDoc(out io.Writer, f *simFlags, doc *simDoc) error {
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
