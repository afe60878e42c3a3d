package launch

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A rank that has said hello waits for the others as long as the join
// timeout allows, not just one heartbeat timeout: ranks build their
// payload (UCX workers, team cards) before they join, and on a loaded
// machine the last may come seconds after the first.
func TestEarlyRankOutlivesHeartbeatTimeoutWhileJoining(t *testing.T) {
	token := strings.Repeat("e", 32)
	opt := Options{HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: 2 * time.Second, JoinTimeout: 30 * time.Second}
	c, err := NewCoordinator("127.0.0.1:0", token, 2, opt)
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- c.Serve(context.Background()) }()
	errs := make(chan error, 2)
	for r := 0; r < 2; r++ {
		go func(r int) {
			if r == 1 {
				time.Sleep(3 * opt.HeartbeatTimeout)
			}
			cl, err := Join(context.Background(), JoinConfig{Addr: c.Addr(), Token: token, Rank: r, Size: 2, Host: "h", Options: opt})
			if err == nil {
				err = cl.Barrier(context.Background())
			}
			if err == nil {
				err = cl.Close()
			}
			errs <- err
		}(r)
	}
	for r := 0; r < 2; r++ {
		require.NoError(t, <-errs)
	}
	require.NoError(t, <-served)
}

// A rank that exits with status 0 without ever joining (an executable that
// is not a goring rank, an early return) has not run the job: RunLocal must
// not report success, nor leave the other ranks waiting out the join
// timeout.
func TestRankExitingCleanlyWithoutJoiningFails(t *testing.T) {
	for _, np := range []int{1, 3} {
		var errb bytes.Buffer
		// Without LAUNCH_TEST_WORKER the test binary runs no test and
		// exits 0 at once.
		env := []string{}
		if np > 1 {
			// ... except that ranks 1.. are real workers waiting to join.
			env = append(env, "LAUNCH_TEST_WORKER_FROM=1")
		}
		start := time.Now()
		err := RunLocal(context.Background(), LocalJob{NP: np, Exe: testExe(t), Args: []string{"-test.run=^$"},
			Env: env, Stderr: &errb, Options: Options{JoinTimeout: 30 * time.Second}})
		require.Error(t, err, "np %d: stderr %s", np, errb.String())
		rank, ok := FailedRank(err)
		require.True(t, ok, "np %d: %v", np, err)
		assert.Equal(t, 0, rank, "np %d: %v", np, err)
		assert.Contains(t, err.Error(), "without joining", "np %d", np)
		assert.Less(t, time.Since(start), 20*time.Second, "np %d: waited out the join timeout", np)
	}
}

// A rank that ran the job but exited with status 0 without saying bye
// left the others without it: the job failed, whichever of its exit and
// the coordinator's verdict the launcher sees first.
func TestRankExitingCleanlyWithoutByeFails(t *testing.T) {
	for i := 0; i < 10; i++ {
		var errb bytes.Buffer
		err := RunLocal(context.Background(), LocalJob{NP: 2, Exe: testExe(t), Args: []string{"-test.run=^$"},
			Env: []string{"LAUNCH_TEST_WORKER=1", "LAUNCH_TEST_ROUNDS=1", "LAUNCH_TEST_NOBYE=1"}, Stderr: &errb})
		require.Error(t, err, "run %d: stderr %s", i, errb.String())
		rank, ok := FailedRank(err)
		require.True(t, ok, "run %d: %v", i, err)
		assert.Equal(t, 1, rank, "run %d: %v", i, err)
	}
}
