package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/ucx"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

func init() { subcommands = append(subcommands, newBenchCmd) }

// maxLocalRanks bounds --np where this launcher starts every rank itself:
// each is a process of this binary with its own UCX workers, and the
// emulated topology is checked before any starts, a full NVLink mesh per
// node that grows with the square of its GPUs (thousands of ranks in one
// node took minutes and then all the memory). Under mpirun the ranks
// come from the job and this bound does not apply.
const maxLocalRanks = 256

type benchFlags struct {
	alg      string
	np       int
	topo     string
	nodes    int
	bytes    string
	iters    int
	warmup   int
	validate bool
	dtype    string
	op       string
	json     bool
	csv      bool
	png      string
	root     int
	chunks   int
	traffic  trafficFlags
	moe      moeFlags
	timeout  time.Duration
	mem      string
	gpus     int
	ipc      bool
	lanes    string // --lanes: lane counts (bench_lanes.go)
	// initPerCall: a new collective every call (bench.Config.InitPerCall).
	initPerCall bool
	// calibration: goring.calibration/v1 file whose figures split device
	// transfers within a node (bench_calibration.go).
	calibration    string
	calibrationOut string
	devicePoll     time.Duration
	netns          netnsFlags // bench_netns.go
	// Measurement aids, hidden from help.
	straggler string
	cpuReport bool
	spinPolls int
	yield     time.Duration
}

func newBenchCmd() *cobra.Command {
	f := &benchFlags{}
	cmd := &cobra.Command{
		Use:   "bench COLL [--alg A|all|auto] --np N [--topo T] [--nodes N] --bytes a:b [--iters I] [--warmup W] [--validate] [--json|--csv|--png FILE]",
		Short: "run a collective on N local processes over UCX and time it OSU-style",
		Long: `bench starts --np processes of this binary (or runs as one rank of an mpirun job),
maps them onto the topology (--topo/--nodes; by default one emulated node of np GPUs,
or --nodes emulated nodes of np/nodes GPUs each, clusterB-like), and times every
algorithm at every size the way the OSU Micro-Benchmarks do.

Every call runs through goring's UCC team layer. --alg auto measures what that layer runs
for a UCC call: each call names no algorithm, so the team's own choice applies (choose.Auto
on the team's shape, the runner that serves it: node kernels, cross-memory reads, lanes,
the device defaults); each row says auto and which algorithm and runner ran. --alg all and
a named algorithm measure goring's sched programs by name. --lanes auto gives the team
lanes=auto (UCC_TL_GORING_LANES=auto): each host call takes the lanes the team picks.

Environment: UCX_TLS (default ` + launch.DefaultUCXTLS + ` on one host, ` + launch.DefaultUCXTLSHosts + ` across hosts); under mpirun GORING_COORD,
GORING_TOKEN and GORING_COORD_FILE (see package launch).

--netns PREFIX --nodes N --ppn L runs on the network-namespace testbed of tests/netns/testbed.sh
(docs/netns.md): node k's ranks in namespace PREFIX-nodek, ranks of a node over shared memory,
ranks of two nodes over the sender's rail (rank i of a node owns rail i mod rails; one UCX worker
per rail, bound to that rail's device), the coordinator on node 0's rail 0; below the table, the
simulator's prediction on the testbed's topology (tc's rate, --rail-alpha) for every row, with
--mem cuda on its GPU form (goring topo testbed --gpu: NVLink inside a node, the CPU copies rail
bytes only); --timeout defaults to 5m there (the rails are slow).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.traffic.observe(cmd)
			f.moe.observe(cmd)
			return runBench(cmd, f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.alg, "alg", "all", "algorithm name, all (each registered one), or auto (no name: what the UCC team layer runs, its choice and runner in the row)")
	fl.IntVar(&f.np, "np", 0, "number of processes (ranks)")
	fl.StringVar(&f.topo, "topo", "", "topology preset or goring.topo/v1 file (default: emulated nodes of np/nodes GPUs)")
	fl.IntVar(&f.nodes, "nodes", 0, "number of (emulated) nodes")
	fl.StringVar(&f.bytes, "bytes", "", "message size, OSU-style range a:b (doubling), or a comma list of either (default: 1:1MiB; a reduction from one element, 4:1MiB for float32)")
	fl.IntVar(&f.iters, "iters", 0, "timed iterations per size (default: as OMB, 1000 up to 8 KiB, 100 above)")
	fl.IntVar(&f.warmup, "warmup", -1, "warm-up iterations per size (default: as OMB, 200 up to 8 KiB, 10 above)")
	fl.BoolVar(&f.validate, "validate", false, "check buffer contents after every iteration (OMB --validation)")
	fl.BoolVar(&f.initPerCall, "init-per-call", false, "make, post and finalize a new collective every call, timed, as Open MPI's coll/ucc and ucc_perftest without -p do (default: one collective a size, posted again, as ucc_perftest -p)")
	fl.StringVar(&f.dtype, "dtype", "float32", "datatype of reductions")
	fl.StringVar(&f.op, "op", "sum", "reduction operator")
	fl.BoolVar(&f.json, "json", false, "print results as one JSON document")
	fl.BoolVar(&f.csv, "csv", false, "print results as CSV")
	fl.StringVar(&f.png, "png", "", "draw latency against size per algorithm into this PNG file")
	fl.IntVar(&f.root, "root", 0, "root rank of bcast")
	fl.IntVar(&f.chunks, "chunks", 0, "pipeline long transfers in this many pieces (0 or 1: none)")
	f.traffic.register(fl)
	f.moe.register(fl)
	fl.StringVar(&f.lanes, "lanes", "1", "lanes per rank, a comma list of counts to compare, or auto (the team gives each call the lanes it pays for, as UCC_TL_GORING_LANES=auto): each lane its own UCX worker, driving part of the buffer (Multi-lane, §3)")
	f.netns.register(fl)
	fl.DurationVar(&f.timeout, "timeout", 0, "deadline of one collective call (default: "+exec.TimeoutRule+")")
	fl.StringVar(&f.mem, "mem", "host", "where the buffers live: host, or cuda (GPU memory; rank r uses GPU r % --gpus)")
	fl.BoolVar(&f.ipc, "ipc", true, "with --mem cuda: ranks of one host push device memory to each other themselves (CUDA IPC; false: through UCX's cuda_ipc)")
	fl.DurationVar(&f.devicePoll, "device-poll", exec.PollEvery, "with --mem cuda: how often a rank looks for finished copies and reductions on its GPU while any run")
	fl.StringVar(&f.calibrationOut, "calibration-out", "", "bench p2p: also write the run's fits as a goring.calibration/v1 file, the paths as the push engine moves them between two processes (for --calibration, UCC_TL_GORING_CALIBRATION and goring sim)")
	fl.StringVar(&f.calibration, "calibration", "", "with --mem cuda: goring.calibration/v1 file (best from goring bench p2p --calibration-out, the engine's own figures); transfers between GPUs of a node are split over the paths it measured, for each step's load (docs/gpu.md)")
	fl.IntVar(&f.gpus, "gpus", 0, "with --mem cuda: how many GPUs the ranks share round-robin (default: every GPU of the machine; several ranks per GPU allowed)")
	fl.StringVar(&f.straggler, "straggler", "", "R:DURATION: rank R sleeps DURATION before every iteration (an emulated slow peer)")
	fl.BoolVar(&f.cpuReport, "cpu-report", false, "print each rank's CPU time (user+system) and the wall time on stderr at the end")
	fl.IntVar(&f.spinPolls, "spin-polls", ucxmp.DefaultSpinPolls, "progress calls before a waiting rank sleeps on the UCX event fd (negative: busy-poll, never sleep)")
	_ = fl.MarkHidden("spin-polls")
	fl.DurationVar(&f.yield, "yield", ucxmp.DefaultYield, "how long a waiting rank polls with sched_yield before it sleeps on the UCX event fd")
	_ = fl.MarkHidden("yield")
	_ = fl.MarkHidden("straggler")
	_ = fl.MarkHidden("cpu-report")
	return cmd
}

func runBench(cmd *cobra.Command, f *benchFlags, collName string) error {
	if collName == "p2p" {
		return runP2P(cmd, f)
	}
	if launch.IsRank() {
		return benchRank(cmd, f, collName)
	}
	if err := resolveNetns(cmd, f); err != nil {
		return err
	}
	if f.np > maxLocalRanks {
		return fmt.Errorf("--np %d: at most %d processes on this machine (across hosts, start the ranks with mpirun)", f.np, maxLocalRanks)
	}
	job, err := prepareBench(f, collName, f.np)
	if err != nil {
		return err
	}
	if err := checkOutFile("--png", f.png); err != nil {
		return err
	}
	if err := checkBenchMem(f); err != nil {
		return err
	}
	if err := ucx.Load(); err != nil {
		return fmt.Errorf("cannot load UCX: %w", err)
	}
	for _, s := range job.skips {
		fmt.Fprintf(cmd.ErrOrStderr(), "goring: note: skipping %s\n", s)
	}
	lj := rankJob(cmd, f.np, "bench", collName)
	configureNetns(&lj, f)
	start := time.Now()
	if f.cpuReport {
		lj.OnExit = func(rank int, st *os.ProcessState) {
			if st != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "goring: cpu rank %d: user %.3fs system %.3fs total %.3fs wall %.3fs\n", rank,
					st.UserTime().Seconds(), st.SystemTime().Seconds(), (st.UserTime() + st.SystemTime()).Seconds(), time.Since(start).Seconds())
			}
		}
	}
	return launch.RunLocal(cmd.Context(), lj)
}

func describeJob(j *benchJob) string {
	s := fmt.Sprintf("%d ranks, %d nodes (%s)", j.np, j.cfg.Topo.NumNodes(), j.cfg.Topo.Name)
	if j.cfg.Collective.Reduces() {
		s += fmt.Sprintf(", %s %s", j.cfg.Dtype, j.cfg.Op)
	}
	if j.mem != "" && j.mem != "host" {
		s += ", " + j.mem + " memory"
	}
	return s + fmt.Sprintf("; UCX %s: %s", ucx.VersionString(), ucx.Library())
}

func writeBenchOutput(out io.Writer, f *benchFlags, collName string, rows []bench.Row) error {
	switch {
	case f.json:
		if err := bench.WriteJSON(out, rows); err != nil {
			return err
		}
	case f.csv:
		if err := bench.WriteCSV(out, rows); err != nil {
			return err
		}
	}
	if f.png != "" {
		pf, err := os.Create(f.png)
		if err != nil {
			return fmt.Errorf("--png: %w", err)
		}
		if err := writeBenchPNG(pf, "goring bench "+collName, rows); err != nil {
			pf.Close()
			return fmt.Errorf("--png: %w", err)
		}
		if err := pf.Close(); err != nil {
			return fmt.Errorf("--png: %w", err)
		}
	}
	return nil
}
