package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/cudaexec"
	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/team"
	"github.com/goring-hpc/goring/ucx"
	ucxmp "github.com/goring-hpc/goring/ucx_mp"
)

// The rank side of goring bench: one process of the job joins the
// coordinator, connects UCX to its peers and runs the timed loop; rank 0
// prints the results.

// benchRank is one rank: join the job, connect UCX, run, and (rank 0)
// print the results.
func benchRank(cmd *cobra.Command, f *benchFlags, collName string) (err error) {
	role, err := launch.FromEnv()
	if err != nil {
		return err
	}
	if f.np != 0 && f.np != role.Size {
		return fmt.Errorf("rank %d: --np %d but the job has %d ranks", role.Rank, f.np, role.Size)
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("rank %d: %w", role.Rank, err)
		}
	}()
	job, err := prepareBench(f, collName, role.Size)
	if err != nil {
		return err
	}
	job.cfg.Rank = role.Rank
	node, local, _ := job.cfg.Topo.Locate(role.Rank)
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	stderr := cmd.ErrOrStderr()
	var rj *rankJob
	switch {
	case benchThroughTeam(f, job):
		rj, err = joinTeamJob(ctx, role, node, local, f, job, stderr)
	case f.netns.on():
		rj, err = joinRailJob(ctx, role, job.cfg.Topo, f, maxLanes(job.cfg.Lanes), stderr)
	default:
		rj, err = joinRankJob(ctx, role, node, local, stderr, f.mem == "cuda", maxLanes(job.cfg.Lanes))
	}
	if err != nil {
		return err
	}
	defer rj.close()
	sess := rj.sess
	for _, d := range rj.data {
		setWait(d, f.spinPolls, f.yield)
	}

	out := cmd.OutOrStdout()
	progress := rankOutput(job, f, collName, role.Rank, out, stderr)
	defer progress.clear()
	job.cfg.Alloc = ucx.Alloc
	job.cfg.Free = ucx.Free
	mem, closeMem, err := benchRankMemory(f, rj, role.Rank, job, stderr)
	if err != nil {
		return err
	}
	defer closeMem()
	job.cfg.Memory = mem
	if job.cfg.Lanes == nil {
		job.cfg.Team = rj.teams[1]
	} else {
		job.cfg.LaneTeams = rj.teams
	}
	stopProfile, err := startRankProfile(role.Rank)
	if err != nil {
		return err
	}
	defer stopProfile()
	rows, err := bench.RunLanes(ctx, job.cfg, rj.data, sess)
	if err != nil {
		rj.waitVerdict()
		return err
	}
	if err := sess.Barrier(ctx); err != nil {
		return err
	}
	if role.Rank == 0 {
		progress.clear()
		if err := writeBenchOutput(out, f, collName, rows); err != nil {
			return err
		}
		if f.netns.on() && !f.json && !f.csv {
			if err := writePredictions(out, job.cfg, rows); err != nil {
				return err
			}
		}
	}
	return rj.finish()
}

// rankOutput wires rank 0's progress line (where stderr is a terminal:
// bench_progress.go) and OSU-style table (unless --json/--csv) into the
// job; the line, or nil, is returned for the caller to clear at the end.
func rankOutput(job *benchJob, f *benchFlags, collName string, rank int, out, stderr io.Writer) *progressLine {
	if rank != 0 {
		return nil
	}
	progress := newProgressLine(stderr, collName)
	if progress != nil {
		job.cfg.OnIteration = progress.update
	}
	if !f.json && !f.csv {
		table := &bench.TableWriter{W: out, Comment: describeJob(job)}
		job.cfg.OnRow = func(r bench.Row) {
			progress.clear()
			_ = table.Row(r)
		}
	}
	return progress
}

// benchRankMemory is the rank's memory for --mem (nil for host). Through
// the team layer that is all: the team has its own push engine and host
// staging. Otherwise, for device memory, the transport gets the push
// engine (--ipc) and host staging where UCX moves no CUDA memory. The
// closer releases them, newest first.
func benchRankMemory(f *benchFlags, rj *rankJob, rank int, job *benchJob, stderr io.Writer) (bench.Memory, func(), error) {
	mem, closeMem, err := rankMemory(f, rank)
	if err != nil {
		return nil, nil, err
	}
	closers := []func(){func() { _ = closeMem() }}
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	if mem == nil {
		return mem, closeAll, nil
	}
	if f.netns.on() {
		cl, err := useRailsMemory(f, rj, rank, job, mem, stderr)
		closers = append(closers, cl...)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		return mem, closeAll, nil
	}
	tr := rj.tr
	if rj.teams != nil {
		if !tr.MovesCUDA() && rank == 0 {
			stagingNote(stderr, cudaexec.DefaultMaxPinned) // the team's stager's bound
		}
		return mem, closeAll, nil
	}
	if f.ipc {
		closers = append(closers, usePushEngine(tr, rj.sess.Peers(), rank, job.planner(rank)))
	}
	if !tr.MovesCUDA() {
		closeStager, err := useStaging(tr, mem, rank, stderr)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		closers = append(closers, closeStager)
	}
	return mem, closeAll, nil
}

// startRankProfile writes this rank's CPU profile into
// $GORING_CPUPROFILE_DIR, if set (a measurement aid).
func startRankProfile(rank int) (func(), error) {
	dir := os.Getenv("GORING_CPUPROFILE_DIR")
	if dir == "" {
		return func() {}, nil
	}
	pf, err := os.Create(filepath.Join(dir, fmt.Sprintf("rank%d.pprof", rank)))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		pf.Close()
	}, nil
}

// isTerminal reports whether w is a terminal: the progress line is drawn
// only there, so logs and captured stderr stay clean.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// rankJob is one rank's connection to its job: the coordinator session
// (control plane, failure notices) and a UCX transport to every peer (data
// plane). Every subcommand that runs as a rank (bench, calibrate) joins
// through it.
type rankJob struct {
	sess      *launch.Session
	tr        *ucxmp.Transport   // lane 0's (the team's, through the team layer); nil on the testbed (data are ucxmp.Rails)
	teams     map[int]*team.Team // the rank's team per lane count (bench_team.go); nil: bench's own transports
	data      []bench.Transport  // every lane's data plane, lane 0's first
	stopWatch func()
	closers   []func()
}

// joinRankJob creates a UCX context and worker (UCX_TLS, or launch.DefaultTLS)
// per lane, joins the coordinator with the workers' addresses and the
// rank's emulated (node, local) place, and connects each lane to that lane
// of every peer (bench_lanes.go). A watcher turns a job
// failure (another rank died or stalled, or the coordinator went away) into
// this rank's exit, whatever it is doing.
func joinRankJob(ctx context.Context, role launch.Role, node, local int, stderr io.Writer, gpuMem bool, nLanes int) (rj *rankJob, err error) {
	owned := &rankJob{}
	rj = owned
	defer func() {
		if err != nil {
			owned.close() // a failed join returns a nil rj: close what it opened
		}
	}()
	cfgMap := map[string]string{}
	if os.Getenv("UCX_TLS") == "" {
		cfgMap["TLS"] = launch.DefaultTLS()
		if gpuMem {
			// cuda_copy and cuda_ipc (UCX's "cuda" alias): device
			// buffers of ranks on one node move GPU to GPU.
			cfgMap["TLS"] += ",cuda"
		}
	}
	lanes, err := openRankLanes(max(nLanes, 1), cfgMap)
	if err != nil {
		return nil, err
	}
	rj.closers = append(rj.closers, func() { closeLanes(lanes) })
	host, _ := os.Hostname()
	sess, err := launch.Start(ctx, role, launch.Peer{Host: host, Node: node, Local: local, Payload: laneAddresses(lanes)}, launch.Options{})
	if err != nil {
		return nil, err
	}
	rj.sess = sess
	rj.watch(role.Rank, stderr)
	trs, err := connectLanes(lanes, role.Rank, sess.Peers())
	if err != nil {
		return nil, err
	}
	rj.tr = trs[0]
	for _, t := range trs {
		rj.data = append(rj.data, t)
	}
	rj.closers = append(rj.closers, func() {
		for i := len(trs) - 1; i >= 0; i-- {
			trs[i].Close()
		}
	})
	return rj, nil
}

// setWait applies --spin-polls and --yield to a lane's data plane.
func setWait(t bench.Transport, spin int, yield time.Duration) {
	switch t := t.(type) {
	case *ucxmp.Transport:
		t.SpinPolls, t.Yield = spin, yield
	case *ucxmp.Rails:
		t.SpinPolls, t.Yield = spin, yield
	}
}

// watch turns a job failure (another rank died or stalled, or the
// coordinator went away) into this rank's exit, whatever it is doing.
func (rj *rankJob) watch(rank int, stderr io.Writer) {
	done := make(chan struct{})
	var stopOnce sync.Once
	rj.stopWatch = func() { stopOnce.Do(func() { close(done) }) }
	go func() {
		select {
		case <-rj.sess.Failed():
			fmt.Fprintf(stderr, "goring: rank %d: %v\n", rank, rj.sess.Err())
			os.Exit(1)
		case <-done:
		}
	}()
}

// waitVerdict is called when this rank's own work failed. A transport
// error (UCX's I/O error on a receive, say) is often the symptom of a peer
// that died; the coordinator learns of a death at once, so wait a moment
// for its verdict: the watcher then reports the cause ("rank N failed") and
// exits; otherwise the error is this rank's own.
func (rj *rankJob) waitVerdict() {
	select {
	case <-rj.sess.Failed():
		time.Sleep(failureGrace) // the watcher prints the job failure and exits meanwhile
	case <-time.After(failureGrace):
	}
}

// finish stops the watcher and leaves the job cleanly (after the last
// barrier: a rank that leaves now is not a failure).
func (rj *rankJob) finish() error {
	rj.stopWatch()
	return rj.sess.Close()
}

// close releases the transport, worker and context, newest first, and stops
// the watcher; safe after finish and on a partly built rankJob.
func (rj *rankJob) close() {
	if rj.stopWatch != nil {
		rj.stopWatch()
	}
	for i := len(rj.closers) - 1; i >= 0; i-- {
		rj.closers[i]()
	}
	rj.closers = nil
}
