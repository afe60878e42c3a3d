package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/pushplan"
	"github.com/goring-hpc/goring/topo"
	"github.com/goring-hpc/goring/units"
)

// benchJob is a validated benchmark: what the launcher checks before it
// starts anything and every rank recomputes identically.
type benchJob struct {
	cfg   bench.Config
	np    int
	algs  []string
	skips []string // "alg: reason" for algorithms skipped at some size
	mem   string   // --mem
	// planners split transfers within each node (--calibration).
	planners *pushplan.Planners
}

// prepareBench checks goring bench's flags for np ranks and picks the
// algorithms that serve at least one size; errors name the flag at fault.
func prepareBench(f *benchFlags, collName string, np int) (*benchJob, error) {
	cfg, err := benchConfig(f, collName, np)
	if err != nil {
		return nil, err
	}
	job := &benchJob{np: np, mem: f.mem, cfg: cfg}
	if err := job.useCalibration(f); err != nil {
		return nil, err
	}
	candidates, err := bench.Candidates(cfg.Collective, f.alg)
	if err != nil {
		return nil, err
	}
	if f.alg == bench.Auto && !benchThroughTeam(f, job) {
		return nil, fmt.Errorf("--alg auto: the team layer chooses, and %s", noTeamReason(f))
	}
	if f.autoLanes() && !benchThroughTeam(f, job) {
		return nil, fmt.Errorf("--lanes auto: the team layer chooses, and %s", noTeamReason(f))
	}
	if f.initPerCall && !benchThroughTeam(f, job) {
		return nil, fmt.Errorf("--init-per-call: the calls are the team layer's, and %s", noTeamReason(f))
	}
	if job.algs, job.skips, err = job.cfg.AdmitAll(candidates, f.alg != "all"); err != nil {
		return nil, err
	}
	job.cfg.Algorithms = job.algs
	if err := checkMemWord(f.mem); err != nil {
		return nil, err
	}
	return job, nil
}

// benchConfig builds the configuration every rank shares (its Rank and
// Algorithms are filled later) from the flags, checking each.
func benchConfig(f *benchFlags, collName string, np int) (bench.Config, error) {
	c, err := coll.ParseCollective(collName)
	if err != nil {
		return bench.Config{}, err
	}
	if np < 1 {
		return bench.Config{}, errors.New("--np is required (number of processes, at least 1)")
	}
	if f.json && f.csv {
		return bench.Config{}, errors.New("--json and --csv exclude each other")
	}
	if err := f.moe.check(c); err != nil || c.Routed() {
		return moeBenchConfig(f, c, np, err)
	}
	dtype, op, err := benchReduction(c, f.dtype, f.op)
	if err != nil {
		return bench.Config{}, err
	}
	sizes, err := benchSizes(f.bytes, dtype)
	if err != nil {
		return bench.Config{}, err
	}
	tp, err := f.benchTopology(np)
	if err != nil {
		return bench.Config{}, err
	}
	predictTp, err := f.predictTopology(np)
	if err != nil {
		return bench.Config{}, err
	}
	if c == coll.Bcast && (f.root < 0 || f.root >= np) {
		return bench.Config{}, fmt.Errorf("--root %d: out of range [0,%d)", f.root, np)
	}
	traffic, err := f.traffic.matrix(c, np, 1)
	if err != nil {
		return bench.Config{}, err
	}
	straggler, delay, err := parseStraggler(f.straggler, np)
	if err != nil {
		return bench.Config{}, err
	}
	if err := f.checkRuns(); err != nil {
		return bench.Config{}, err
	}
	lanes, err := parseLanes(f.lanes, c, f.mem)
	if err != nil {
		return bench.Config{}, err
	}
	return bench.Config{Straggler: straggler, StragglerDelay: delay, Topo: tp, PredictTopo: predictTp, Collective: c, Sizes: sizes, Dtype: dtype, Op: op,
		Iters: f.iters, Warmup: f.warmup, Validate: f.validate, Root: f.root, Chunks: f.chunks, Traffic: traffic, CallTimeout: f.timeout, Lanes: lanes, InitPerCall: f.initPerCall}, nil
}

// benchReduction parses --dtype and --op for a reducing collective; a
// moving one has neither (and moves bytes).
func benchReduction(c coll.Collective, dtypeName, opName string) (coll.Dtype, coll.Op, error) {
	if !c.Reduces() {
		return coll.DtypeInvalid, coll.OpInvalid, nil
	}
	dtype, err := coll.ParseDtype(dtypeName)
	if err != nil {
		return dtype, coll.OpInvalid, err
	}
	op, err := coll.ParseOp(opName)
	if err != nil {
		return dtype, op, err
	}
	if !coll.Supports(op, dtype) {
		return dtype, op, fmt.Errorf("--op %s is not defined for --dtype %s", op, dtype)
	}
	return dtype, op, nil
}

// benchSizes parses --bytes; every size must be whole elements of dtype
// (bytes when the collective does not reduce). Without --bytes the sizes
// run from one element to 1 MiB, as OMB's: a fixed 1 byte start would
// refuse every reduction's default.
func benchSizes(spec string, dtype coll.Dtype) ([]int64, error) {
	elem := int64(max(dtype.Size(), 1))
	if spec == "" {
		spec = fmt.Sprintf("%d:1MiB", elem)
	}
	sizes, err := units.ParseRange(spec)
	if err != nil {
		return nil, fmt.Errorf("--bytes: %w", err)
	}
	for _, s := range sizes {
		if s%elem != 0 {
			return nil, fmt.Errorf("--bytes: %d is not a multiple of the %d-byte %s", s, elem, dtype)
		}
	}
	return sizes, nil
}

// parseStraggler reads the hidden --straggler RANK:DURATION; "" is none
// (rank -1).
func parseStraggler(spec string, np int) (int, time.Duration, error) {
	if spec == "" {
		return -1, 0, nil
	}
	rs, ds, ok := strings.Cut(spec, ":")
	r, err1 := strconv.Atoi(rs)
	d, err2 := time.ParseDuration(ds)
	if !ok || err1 != nil || err2 != nil || r < 0 || r >= np || d < 0 {
		return -1, 0, fmt.Errorf("--straggler %q: want RANK:DURATION with a rank in [0,%d), e.g. 1:5ms", spec, np)
	}
	return r, d, nil
}

// benchTopo resolves --topo/--nodes for np ranks. Without --topo the
// topology is emulated: --nodes nodes (default 1) of np/nodes GPUs each
// (bench.EmulatedTopology).
func benchTopo(spec string, nodes, np int) (*topo.Topology, error) {
	if spec != "" {
		t, err := loadTopo(spec, nodes)
		if err != nil {
			return nil, err
		}
		if t.NumGPUs() != np {
			return nil, fmt.Errorf("--np %d does not match topology %s with %d GPUs (%d nodes): use --np %d", np, t.Name, t.NumGPUs(), t.NumNodes(), t.NumGPUs())
		}
		return t, nil
	}
	return bench.EmulatedTopology(nodes, np)
}

// checkRuns refuses the counts and durations of a run that mean nothing:
// negative chunks, iterations, warm-ups (-1, the flag's default, is OMB's
// counts) and call deadlines.
func (f *benchFlags) checkRuns() error {
	switch {
	case f.chunks < 0:
		return fmt.Errorf("--chunks %d: want 0 or more", f.chunks)
	case f.iters < 0:
		return fmt.Errorf("--iters %d: want a positive count (0: as OMB)", f.iters)
	case f.warmup < -1:
		return fmt.Errorf("--warmup %d: want 0 or more (leave it out: as OMB)", f.warmup)
	case f.timeout < 0:
		return fmt.Errorf("--timeout %v: want a positive duration (0: %s)", f.timeout, exec.TimeoutRule)
	}
	return nil
}
