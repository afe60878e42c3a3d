package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// LocalJob describes NP copies of one executable on this machine.
type LocalJob struct {
	NP   int
	Exe  string // empty: os.Executable()
	Args []string
	// Env is added to this process's environment for every rank.
	Env []string
	// Stdout receives rank 0's standard output (the results); other
	// ranks' standard output is discarded. Stderr receives every rank's.
	Stdout, Stderr io.Writer
	Options        Options
	// Grace is how long the other ranks may take to exit after a failure
	// before they are killed (default 2 s; they normally exit at once on
	// the coordinator's failure broadcast). The failed rank itself, if
	// still there (stalled), is killed at once.
	Grace time.Duration
	// OnExit, if set, is called (from RunLocal's goroutine) with each
	// rank's process state once it has exited: its CPU times, for example.
	OnExit func(rank int, state *os.ProcessState)
	// Netns, if set, names the network namespace each rank runs in (""
	// for this process's own): the rank is started through
	// "ip netns exec", which also shows it that namespace's devices in
	// /sys, where UCX looks for them (see netns.go).
	Netns func(rank int) string
	// CoordAddr is where the coordinator listens (default 127.0.0.1:0),
	// inside namespace CoordNetns when that is set.
	CoordAddr, CoordNetns string
}

type exitEvent struct {
	rank int
	err  error
}

// localRun is one RunLocal in progress: the coordinator, the rank
// processes, and what the supervisor has learnt so far.
type localRun struct {
	job     LocalJob
	grace   time.Duration
	coord   *Coordinator
	procs   []*exec.Cmd
	exits   chan exitEvent
	exitErr []error          // per rank, once exited
	first   error            // the failure RunLocal reports
	graceC  <-chan time.Time // armed by the first failure
}

// RunLocal hosts the coordinator, starts the ranks and waits for them. It
// returns nil when every rank left cleanly, and otherwise an error naming
// the first rank that failed (a *RankFailedError in its chain). It never
// waits longer than Grace after a failure: ranks still alive then are
// killed.
func RunLocal(ctx context.Context, job LocalJob) error {
	if job.NP < 1 {
		return fmt.Errorf("--np %d: want at least 1", job.NP)
	}
	exe := job.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("finding this executable: %w", err)
		}
	}
	lr := &localRun{job: job, grace: job.Grace, procs: make([]*exec.Cmd, job.NP), exits: make(chan exitEvent, job.NP), exitErr: make([]error, job.NP)}
	if lr.grace <= 0 {
		lr.grace = 2 * time.Second
	}
	token, err := NewToken()
	if err != nil {
		return err
	}
	if err := lr.listen(token); err != nil {
		return err
	}
	serveCtx, cancelServe := context.WithCancel(ctx)
	defer cancelServe()
	coordDone := make(chan error, 1)
	go func() { coordDone <- lr.coord.Serve(serveCtx) }()
	// A rank's Pdeathsig fires when the thread that started it ends, not
	// when this process does, and the runtime ends a thread whenever a
	// goroutine exits locked to it (InNetns's, say, when it cannot return
	// to this namespace; any caller's). Held by this goroutine until every
	// rank has exited, the thread that starts them runs nothing else.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := lr.startRanks(exe, token); err != nil {
		return err
	}
	coordC := lr.supervise(ctx, coordDone)
	if coordC != nil && lr.first == nil {
		// Every rank exited with status 0, but only the coordinator knows
		// whether each said bye first. Their connections are closed now, so
		// its verdict (done, or a rank lost) comes at once: wait for it
		// rather than cancel it and take a rank's silent exit for success.
		select {
		case cerr := <-coordC:
			coordC = nil
			if cerr != nil {
				lr.fail(cerr)
			}
		case <-time.After(lr.grace):
		case <-ctx.Done():
		}
	}
	cancelServe()
	if coordC != nil {
		if cerr := <-coordC; cerr != nil && lr.first == nil && !errors.Is(cerr, context.Canceled) {
			lr.first = cerr
		}
	}
	return lr.verdict()
}

// listen creates the coordinator at job.CoordAddr, in job.CoordNetns if
// set.
func (lr *localRun) listen(token string) error {
	addr := lr.job.CoordAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	mk := func() (err error) {
		lr.coord, err = NewCoordinator(addr, token, lr.job.NP, lr.job.Options)
		return err
	}
	if lr.job.CoordNetns == "" {
		return mk()
	}
	return InNetns(lr.job.CoordNetns, mk)
}

// startRanks starts the NP copies of exe with their rank's environment.
// If one cannot start, those already started are killed and reaped.
func (lr *localRun) startRanks(exe, token string) error {
	job := lr.job
	// Ranks share one stderr; a writer that is not a file is written by one
	// copying goroutine per rank, so serialise them.
	stderr := job.Stderr
	if _, isFile := stderr.(*os.File); stderr != nil && !isFile {
		stderr = &lockedWriter{w: stderr}
	}
	for r := 0; r < job.NP; r++ {
		cmd := exec.Command(exe, job.Args...)
		if job.Netns != nil && job.Netns(r) != "" {
			ipExe, err := exec.LookPath("ip")
			if err != nil {
				lr.killAll()
				for i := 0; i < r; i++ {
					<-lr.exits
				}
				return fmt.Errorf("starting rank %d in netns %s: %w", r, job.Netns(r), err)
			}
			cmd = exec.Command(ipExe, append([]string{"netns", "exec", job.Netns(r), exe}, job.Args...)...)
		}
		cmd.Env = append(os.Environ(), job.Env...)
		cmd.Env = append(cmd.Env,
			EnvRank+"="+strconv.Itoa(r), EnvSize+"="+strconv.Itoa(job.NP), EnvLocalRank+"="+strconv.Itoa(r),
			EnvCoord+"="+lr.coord.Addr(), EnvToken+"="+token)
		if r == 0 {
			cmd.Stdout = job.Stdout
		}
		cmd.Stderr = stderr
		// A rank must not outlive its launcher.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			lr.killAll()
			for i := 0; i < r; i++ {
				<-lr.exits
			}
			return fmt.Errorf("starting rank %d: %w", r, err)
		}
		lr.procs[r] = cmd
		go func(r int, cmd *exec.Cmd) { lr.exits <- exitEvent{r, cmd.Wait()} }(r, cmd)
	}
	if ranksStarted != nil {
		ranksStarted()
	}
	return nil
}

// ranksStarted, when set (by tests), runs on RunLocal's goroutine once
// every rank has started.
var ranksStarted func()

// supervise waits until every rank has exited, turning the first failure
// (a rank's exit, the coordinator's verdict, ctx) into lr.first and
// killing what is left once the grace period is over. It returns the
// coordinator's channel if the coordinator has not finished yet.
func (lr *localRun) supervise(ctx context.Context, coordDone <-chan error) <-chan error {
	coordC := coordDone
	for exited := 0; exited < lr.job.NP; {
		select {
		case ev := <-lr.exits:
			exited++
			lr.rankExited(ev)
		case cerr := <-coordC:
			coordC = nil
			lr.coordinatorDone(cerr)
		case <-ctx.Done():
			lr.fail(ctx.Err())
			lr.killAll()
		case <-lr.graceC:
			lr.killAll()
			lr.graceC = nil
		}
	}
	return coordC
}

// rankExited records a rank's exit; a failed one fails the job.
func (lr *localRun) rankExited(ev exitEvent) {
	lr.exitErr[ev.rank] = ev.err
	if lr.job.OnExit != nil {
		lr.job.OnExit(ev.rank, lr.procs[ev.rank].ProcessState)
	}
	joined := lr.coord.admitted(ev.rank)
	if ev.err == nil && joined {
		return
	}
	if !joined {
		// The coordinator would only notice at the join timeout: tell it,
		// so that the ranks waiting for their welcome exit now naming this
		// one. A clean exit is a failure all the same: the rank did not
		// run the job (none leaves cleanly before its welcome, which needs
		// every rank's hello).
		reason := "exited with status 0 without joining the job"
		if ev.err != nil {
			reason = "exited before joining the job: " + ev.err.Error()
		}
		lr.coord.fail(ev.rank, reason)
	}
	// The coordinator usually knows the root cause first: a rank exiting
	// after the failure broadcast is a victim.
	if cerr := lr.coord.Err(); cerr != nil {
		lr.fail(cerr)
	} else {
		lr.fail(&RankFailedError{Rank: ev.rank, Reason: "exited: " + ev.err.Error()})
	}
}

// coordinatorDone takes the coordinator's verdict; the rank it names is
// killed at once if still there (stalled: it would never leave).
func (lr *localRun) coordinatorDone(cerr error) {
	if cerr == nil {
		return
	}
	lr.fail(cerr)
	if r, ok := FailedRank(cerr); ok && r >= 0 && r < lr.job.NP && lr.procs[r] != nil && lr.exitErr[r] == nil {
		_ = lr.procs[r].Process.Kill()
	}
}

// fail keeps the first failure and starts the grace period.
func (lr *localRun) fail(err error) {
	if lr.first == nil {
		lr.first = err
		lr.graceC = time.After(lr.grace)
	}
}

func (lr *localRun) killAll() {
	for _, p := range lr.procs {
		if p != nil && p.Process != nil {
			_ = p.Process.Kill()
		}
	}
}

// verdict is RunLocal's error: the first failure, with the failed rank's
// own exit status added when the failure was reported otherwise (a stall
// the coordinator saw, say).
func (lr *localRun) verdict() error {
	first := lr.first
	if first != nil {
		var f *RankFailedError
		if errors.As(first, &f) && f.Rank >= 0 && f.Rank < lr.job.NP && lr.exitErr[f.Rank] != nil && !strings.HasPrefix(f.Reason, "exited") {
			return fmt.Errorf("%w (exit: %v)", first, lr.exitErr[f.Rank])
		}
	}
	return first
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
