package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/team"
	"github.com/goring-hpc/goring/topo"
)

// Ctrl is the job's control plane, used between sizes (launch.Client and
// launch.Session satisfy it).
type Ctrl interface {
	Allgather(ctx context.Context, data []byte) ([][]byte, error)
}

// Transport is the data plane the runner drives: an exec.Transport that
// can also start a new collective call (a fresh tag sequence).
type Transport interface {
	exec.Transport
	NextCall()
}

// Config is one rank's share of a benchmark.
type Config struct {
	Rank int
	Topo *topo.Topology
	// PredictTopo, when set, is the topology Predict simulates Topo's
	// plans on: the testbed's GPU form for a --mem cuda run, whose plans
	// are the host testbed's but whose bytes move as on GPUs. Nil: Topo.
	PredictTopo *topo.Topology
	Collective  coll.Collective
	Algorithms  []string
	Sizes       []int64
	Dtype       coll.Dtype
	Op          coll.Op
	// Iters <= 0 and Warmup < 0 choose as OMB does (see Iterations).
	Iters, Warmup int
	Validate      bool
	Root          int
	// Chunks > 1 asks the generators to pipeline long transfers in that
	// many pieces (sched.Spec.Chunks).
	Chunks int
	// StepLoads annotates every send to a peer of the rank's node with
	// its step's load (sched.AnnotateLoads), for a push engine that
	// splits transfers (mpath.Planner).
	StepLoads bool
	// Traffic returns the alltoallv byte matrix for a size.
	Traffic func(bytes int64) ([][]int64, error)
	// Routing returns dispatch's and combine's routing for a size (tokens
	// per rank: dispatch.go).
	Routing func(tokens int) (*moe.Routing, error)
	// CallTimeout bounds one collective call (0: exec.TimeoutFor its size).
	CallTimeout time.Duration
	// Alloc and Free provide host buffer memory (ucx.Alloc for real
	// runs); nil uses the Go heap.
	Alloc func(n int) []byte
	Free  func(b []byte) error
	// Memory, when set, provides the buffers instead (GPU memory, say):
	// patterns are written to and read from it through the host.
	Memory Memory
	// Team, when set, runs every measured call through the team layer
	// as UCC runs it (teamcall.go): one team.Coll over the rank's buffers
	// per (algorithm, size), posted and tested every iteration, its runner
	// chosen by the team's Select (the leader on a shared GPU, lanes, the
	// messages...). The transport given to Run then carries only the
	// barriers (the team's own, Team.Transport()). Nil: the plan's
	// program on one Machine, or on lanes, over the transports given to
	// Run (an in-memory network in tests; the namespace testbed's rails).
	Team *team.Team
	// LaneTeams are, with Lanes, the team of each lane count (a team
	// whose context runs that many lanes: option lanes=W), which runs
	// that count's calls in place of Team; the team's lanes runner splits
	// them (team/lanes.go).
	LaneTeams map[int]*team.Team
	// InitPerCall makes every timed call a new team.Coll, made and
	// finalized inside the timed region, as a UCC user's non-persistent
	// call is (Open MPI's coll/ucc; ucc_perftest without -p); otherwise
	// one Coll per (algorithm, size) is posted again (ucc_perftest -p).
	// It needs Team.
	InitPerCall bool
	// Straggler, when StragglerDelay > 0, is a rank that sleeps that long
	// before every iteration: an emulated slow peer, to see how the others
	// wait (and what CPU they burn meanwhile).
	Straggler      int
	StragglerDelay time.Duration
	// OnRow receives each result on rank 0; OnIteration is called on
	// rank 0 when a size starts (Iter 0) and after every iteration, with
	// where the run stands (a progress display).
	OnRow       func(Row)
	OnIteration func(Progress)
	// Lanes are the lane counts to measure, each a series of rows
	// (Multi-lane, §3; see lanes.go); RunLanes gets at least the largest
	// count of transports. Nil: one lane, and rows carry no lane count.
	Lanes []int
}

// Progress is where a run stands: the algorithm, the point (lane count
// and size) and the iteration; indexes count from 1, Iter from 0 (none
// done yet). Points an algorithm does not serve are skipped, so Point may
// jump.
type Progress struct {
	Algorithm   string
	Alg, Algs   int
	Bytes       int64
	Lanes       int // the lane count; 0 without cfg.Lanes
	Point       int // of Points: the (lane count, size) pairs of one algorithm
	Points      int
	Iter, Iters int // iterations done, of warm-up and timed ones
	Warmup      int // the first Warmup iterations are warm-up
}

// Plan generates this rank's program for one (algorithm, size), with the
// counts of alltoallv (for Auto, the plan that sizes the team's call). An
// *sched.UnsupportedError means the algorithm does not serve the case;
// every rank reaches the same verdict.
func (c *Config) Plan(alg string, bytes int64) (*sched.Plan, error) {
	if alg == Auto {
		return c.autoPlan(bytes) // auto.go
	}
	spec, err := c.spec(alg, bytes)
	if err != nil {
		return nil, err
	}
	plan, err := sched.GenerateRank(spec, c.Rank)
	// A routed call's steps are token rows: the step loads serve the push
	// engine's splitting of whole-buffer transfers, not those.
	if err == nil && c.StepLoads && !c.Collective.Routed() {
		plan.AnnotateRankLoads(c.Rank)
	}
	return plan, err
}

// spec is the whole collective's plan spec of one (algorithm, size), with
// alltoallv's counts and dispatch's and combine's routing (size: tokens
// per rank).
func (c *Config) spec(alg string, bytes int64) (sched.Spec, error) {
	spec := sched.Spec{Collective: c.Collective, Algorithm: alg, Topo: c.Topo, Bytes: bytes, Root: c.Root, DtypeBytes: 1, Chunks: c.Chunks}
	if c.Collective.Reduces() {
		spec.DtypeBytes = c.Dtype.Size()
	}
	if c.Collective == coll.Alltoallv {
		if c.Traffic == nil {
			return spec, fmt.Errorf("alltoallv needs a traffic matrix")
		}
		counts, err := c.Traffic(bytes)
		if err != nil {
			return spec, err
		}
		spec.Counts = counts
	}
	if c.Collective.Routed() {
		// A point's size is the tokens each rank owns (dispatch.go).
		if c.Routing == nil {
			return spec, fmt.Errorf("%s needs a routing", c.Collective)
		}
		r, err := c.Routing(int(bytes))
		if err != nil {
			return spec, err
		}
		spec.Routing, spec.Bytes = r, r.TokenBytes
		if c.Collective == coll.Combine {
			spec.DtypeBytes = c.Dtype.Size()
		}
	}
	return spec, nil
}

// Run measures every algorithm at every size, in lockstep with the other
// ranks, and returns the rows (complete on rank 0; other ranks get them
// too since statistics are gathered everywhere). Unsupported (algorithm,
// size) pairs are skipped silently: the launcher reports them.
func Run(ctx context.Context, cfg Config, t Transport, ctrl Ctrl) ([]Row, error) {
	return RunLanes(ctx, cfg, []Transport{t}, ctrl)
}

// RunLanes is Run on lanes: ts[w] is lane w's transport, one per lane of
// the largest count in cfg.Lanes; lane 0's also carries the barriers.
func RunLanes(ctx context.Context, cfg Config, ts []Transport, ctrl Ctrl) ([]Row, error) {
	var rows []Row
	for _, w := range cfg.LaneCounts() {
		if w > len(ts) && cfg.teamFor(w) == nil {
			return rows, fmt.Errorf("%d lanes asked for, %d transports", w, len(ts))
		}
	}
	points := len(cfg.LaneCounts()) * len(cfg.Sizes)
	for a, alg := range cfg.Algorithms {
		point := 0
		for _, w := range cfg.LaneCounts() {
			for _, size := range cfg.Sizes {
				point++
				lp, err := cfg.planLanes(alg, size, w)
				if sched.IsUnsupported(err) {
					continue
				}
				if err != nil {
					return rows, err
				}
				at := Progress{Algorithm: alg, Alg: a + 1, Algs: len(cfg.Algorithms), Bytes: size, Point: point, Points: points}
				if cfg.Lanes != nil {
					at.Lanes = w
				}
				row, err := runOne(ctx, &cfg, lp, cfg.laneTransports(ts, w), ctrl, at)
				if err != nil {
					return rows, err
				}
				if cfg.Lanes != nil {
					row.Lanes = w
				}
				rows = append(rows, row)
				if cfg.Rank == 0 && cfg.OnRow != nil {
					cfg.OnRow(row)
				}
			}
		}
	}
	return rows, nil
}

// runOne measures one (algorithm, size) on this rank: warm-up and timed
// iterations in lockstep with the other ranks (a barrier after each, as
// OMB), validated when asked, then the row every rank agrees on. at is
// the point, for OnIteration.
func runOne(ctx context.Context, cfg *Config, lp *lanePlans, ts []Transport, ctrl Ctrl, at Progress) (Row, error) {
	plan := lp.whole
	rc, err := newRankCall(cfg, lp)
	if err != nil {
		return Row{}, err
	}
	defer rc.close()
	timed, skip := Iterations(plan.Bytes, cfg.Iters, cfg.Warmup)
	if !cfg.Validate {
		if err := rc.fillSrc(0); err != nil {
			return Row{}, err
		}
	}
	if _, err := ctrl.Allgather(ctx, nil); err != nil {
		return Row{}, err
	}
	at.Iters, at.Warmup = timed+skip, skip
	progress := func(done int) {
		if cfg.Rank == 0 && cfg.OnIteration != nil {
			at.Iter = done
			cfg.OnIteration(at)
		}
	}
	progress(0)
	var total time.Duration
	for it := 0; it < timed+skip; it++ {
		elapsed, err := rc.iteration(ctx, ts, it)
		if err != nil {
			return Row{}, err
		}
		if it >= skip {
			total += elapsed
		}
		progress(it + 1)
	}
	avgUS := float64(total.Nanoseconds()) / 1e3 / float64(max(timed, 1))
	row, err := gatherRow(ctx, ctrl, cfg, plan, avgUS, timed, memName(rc.bufs.Dst.Mem()))
	if err == nil && plan.Algorithm == Auto {
		// What the team chose, after the iterations: a runner that falls
		// back does so at a post, on every rank alike.
		ran := rc.ran
		if ran == nil {
			ran = rc.coll
		}
		row.Ran, row.Runner = ran.Algorithm(), ran.Runner()
	}
	return row, err
}

// iteration runs the collective once: the pattern filled first when
// validating (outside the timed region), the call timed, its output
// checked, and the barrier that keeps the ranks in step.
func (rc *rankCall) iteration(ctx context.Context, ts []Transport, it int) (time.Duration, error) {
	cfg, rank := rc.cfg, rc.cfg.Rank
	if cfg.Validate {
		if err := rc.fillSrc(it); err != nil {
			return 0, err
		}
	}
	if cfg.StragglerDelay > 0 && rank == cfg.Straggler {
		time.Sleep(cfg.StragglerDelay)
	}
	start := time.Now()
	err := rc.runCall(ctx, ts, start.Add(rc.timeout))
	elapsed := time.Since(start)
	if err != nil {
		return 0, err
	}
	if cfg.Validate {
		if err := rc.check(it); err != nil {
			return 0, err
		}
	}
	if err := Barrier(ctx, ts[0], rank, rc.plan.NRanks, start.Add(rc.timeout)); err != nil {
		return 0, err
	}
	return elapsed, nil
}
