package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
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
}

type exitEvent struct {
	rank int
	err  error
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
	grace := job.Grace
	if grace <= 0 {
		grace = 2 * time.Second
	}
	token, err := NewToken()
	if err != nil {
		return err
	}
	coord, err := NewCoordinator("127.0.0.1:0", token, job.NP, job.Options)
	if err != nil {
		return err
	}
	serveCtx, cancelServe := context.WithCancel(ctx)
	defer cancelServe()
	coordDone := make(chan error, 1)
	go func() { coordDone <- coord.Serve(serveCtx) }()

	// Ranks share one stderr; a writer that is not a file is written by one
	// copying goroutine per rank, so serialise them.
	stderr := job.Stderr
	if _, isFile := stderr.(*os.File); stderr != nil && !isFile {
		stderr = &lockedWriter{w: stderr}
	}
	procs := make([]*exec.Cmd, job.NP)
	exits := make(chan exitEvent, job.NP)
	killAll := func() {
		for _, p := range procs {
			if p != nil && p.Process != nil {
				_ = p.Process.Kill()
			}
		}
	}
	started := 0
	for r := 0; r < job.NP; r++ {
		cmd := exec.Command(exe, job.Args...)
		cmd.Env = append(os.Environ(), job.Env...)
		cmd.Env = append(cmd.Env,
			EnvRank+"="+strconv.Itoa(r), EnvSize+"="+strconv.Itoa(job.NP), EnvLocalRank+"="+strconv.Itoa(r),
			EnvCoord+"="+coord.Addr(), EnvToken+"="+token)
		if r == 0 {
			cmd.Stdout = job.Stdout
		}
		cmd.Stderr = stderr
		// A rank must not outlive its launcher.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			killAll()
			for i := 0; i < started; i++ {
				<-exits
			}
			return fmt.Errorf("starting rank %d: %w", r, err)
		}
		procs[r] = cmd
		started++
		go func(r int, cmd *exec.Cmd) { exits <- exitEvent{r, cmd.Wait()} }(r, cmd)
	}

	var first error
	exitErr := make([]error, job.NP)
	exited := 0
	var graceC <-chan time.Time
	fail := func(err error) {
		if first == nil {
			first = err
			graceC = time.After(grace)
		}
	}
	coordC := (<-chan error)(coordDone)
	for exited < job.NP {
		select {
		case ev := <-exits:
			exited++
			exitErr[ev.rank] = ev.err
			if job.OnExit != nil {
				job.OnExit(ev.rank, procs[ev.rank].ProcessState)
			}
			if ev.err != nil {
				// The coordinator usually knows the root cause first: a
				// rank exiting after the failure broadcast is a victim.
				if cerr := coord.Err(); cerr != nil {
					fail(cerr)
				} else {
					fail(&RankFailedError{Rank: ev.rank, Reason: "exited: " + ev.err.Error()})
				}
			}
		case cerr := <-coordC:
			coordC = nil
			if cerr != nil {
				fail(cerr)
				if r, ok := FailedRank(cerr); ok && r >= 0 && r < job.NP && procs[r] != nil && exitErr[r] == nil {
					_ = procs[r].Process.Kill() // stalled: it would never leave
				}
			}
		case <-ctx.Done():
			fail(ctx.Err())
			killAll()
		case <-graceC:
			killAll()
			graceC = nil
		}
	}
	cancelServe()
	if coordC != nil {
		if cerr := <-coordC; cerr != nil && first == nil && !errors.Is(cerr, context.Canceled) {
			first = cerr
		}
	}
	if first != nil {
		var f *RankFailedError
		if errors.As(first, &f) && f.Rank >= 0 && f.Rank < job.NP && exitErr[f.Rank] != nil && !strings.HasPrefix(f.Reason, "exited") {
			return fmt.Errorf("%w (exit: %v)", first, exitErr[f.Rank])
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
