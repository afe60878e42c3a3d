package launch

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Under mpirun rank 0 hosts the coordinator: when it dies the others lose
// the coordinator, and rank 0 is the rank they must name.
func TestMpirunRankZeroLossNamesRankZero(t *testing.T) {
	token := strings.Repeat("f", 32)
	opt := Options{HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: 5 * time.Second, JoinTimeout: 30 * time.Second}
	ctx := context.Background()
	// Rank 0 binds a fixed address the test picks: a free port.
	probe, err := NewCoordinator("127.0.0.1:0", token, 1, opt)
	require.NoError(t, err)
	addr := probe.Addr()
	probe.ln.Close()
	roles := []Role{
		{Rank: 0, Size: 2, LocalRank: 0, Launcher: "mpirun", Coord: addr, Token: token},
		{Rank: 1, Size: 2, LocalRank: 1, Launcher: "mpirun", Coord: addr, Token: token},
	}
	sess := make([]*Session, 2)
	errs := make(chan error, 2)
	for r := range roles {
		go func(r int) {
			var err error
			sess[r], err = Start(ctx, roles[r], Peer{Host: "h"}, opt)
			errs <- err
		}(r)
	}
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	defer sess[1].Client.abandon()
	// Rank 0 vanishes: its coordinator's sockets close with it, no
	// failure notice sent.
	sess[0].coord.shutdown()
	sess[0].Client.abandon()
	select {
	case <-sess[1].Failed():
	case <-time.After(20 * time.Second):
		t.Fatal("rank 1 did not notice rank 0's loss")
	}
	rank, ok := FailedRank(sess[1].Err())
	require.True(t, ok, "%v", sess[1].Err())
	assert.Equal(t, 0, rank, "%v", sess[1].Err())
	_, err = sess[1].Allgather(ctx, nil)
	rank, ok = FailedRank(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, 0, rank, "%v", err)
}
