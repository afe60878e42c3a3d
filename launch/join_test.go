package launch

import (
	"context"
	"strings"
	"testing"
	"time"

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
