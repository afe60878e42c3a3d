package launch

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// endIdleThreads has the Go runtime end every OS thread it can take now:
// goroutines that lock themselves to a thread each and exit locked end
// theirs. Taking them all at once takes every thread no goroutine holds,
// the caller's too while it waits here. It returns once those threads
// are gone.
func endIdleThreads(t *testing.T) {
	n := 4*runtime.GOMAXPROCS(0) + 64
	tids := make([]int, n)
	var locked, gone sync.WaitGroup
	release := make(chan struct{})
	locked.Add(n)
	gone.Add(n)
	for i := range n {
		go func() {
			runtime.LockOSThread()
			tids[i] = unix.Gettid()
			locked.Done()
			<-release
			gone.Done()
		}()
	}
	locked.Wait()
	close(release)
	gone.Wait()
	for _, tid := range tids {
		require.Eventually(t, func() bool {
			_, err := os.Stat(filepath.Join("/proc/self/task", strconv.Itoa(tid)))
			return os.IsNotExist(err)
		}, 30*time.Second, time.Millisecond, "thread %d did not end", tid)
	}
}

// A rank started with Pdeathsig gets SIGKILL when the thread that started
// it ends, not the launcher: the threads the runtime ends (those that run
// a goroutine exiting while locked to its thread) must never be one that
// started a living rank.
func TestSpawnRanksSurviveThreadsEnding(t *testing.T) {
	dir := t.TempDir()
	goFile := filepath.Join(dir, "go")
	ranksStarted = func() {
		endIdleThreads(t)
		require.NoError(t, os.WriteFile(goFile, nil, 0o600))
	}
	defer func() { ranksStarted = nil }()
	var out, errb bytes.Buffer
	err := RunLocal(context.Background(), LocalJob{NP: 2, Exe: testExe(t), Args: []string{"-test.run=^$"},
		Env: []string{"LAUNCH_TEST_WORKER=1", "LAUNCH_TEST_WAIT_FILE=" + goFile}, Stdout: &out, Stderr: &errb})
	require.NoError(t, err, "stderr %s", errb.String())
	require.Equal(t, "worker 0 done\n", out.String())
}
