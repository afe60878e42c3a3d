package exec_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/memtransport"
)

// deadWatch reports rank 1 dead once dead is set.
type deadWatch struct{ dead bool }

func (w *deadWatch) Every() time.Duration { return time.Millisecond }
func (w *deadWatch) Check() error {
	if w.dead {
		return errors.New("rank 1 has exited")
	}
	return nil
}

// lateRank posts rank 0's part of a two-rank allgather with one Progress,
// lets rank 1 finish its whole call, and then calls late(), as an
// application that computes between its polls of a nonblocking
// collective would. Rank 0's next Progress must find the call complete:
// every byte it waits for has arrived, so neither a deadline that passed
// meanwhile nor a peer that has since left is a reason to fail it.
func lateRank(t *testing.T, deadline func() time.Time, w exec.Watch, late func()) {
	t.Helper()
	for _, mode := range []memtransport.Options{{}, {Eager: true}} {
		plan := ringAllgather(2, 8)
		net := memtransport.New(2, mode)
		var ms [2]*exec.Machine
		var outs [2][]byte
		for r := range ms {
			in := []byte{byte(r), 1, 2, 3, 4, 5, 6, 7}
			outs[r] = make([]byte, 16)
			m, err := exec.New(&plan.Ranks[r], exec.HostBuffers(in, outs[r], nil), exec.ConfigFor(plan, 0, 0))
			require.NoError(t, err)
			ms[r] = m
		}
		var c exec.Call
		c.SetWatch(w)
		require.NoError(t, c.Begin(ms[0], net.Endpoint(0), deadline()))
		done, err := c.Progress(time.Time{})
		require.NoError(t, err)
		require.False(t, done)
		require.NoError(t, exec.Run(context.Background(), ms[1], net.Endpoint(1), time.Now().Add(5*time.Second)))
		late()
		done, err = c.Progress(time.Time{})
		require.NoError(t, err, "eager %v", mode.Eager)
		assert.True(t, done, "eager %v", mode.Eager)
		assert.Equal(t, outs[1], outs[0])
	}
}

func TestCallPolledAfterItsDeadlineTakesWhatArrived(t *testing.T) {
	lateRank(t, func() time.Time { return time.Now().Add(20 * time.Millisecond) }, nil, func() { time.Sleep(40 * time.Millisecond) })
}

func TestCallPolledAfterPeerLeftTakesWhatArrived(t *testing.T) {
	w := &deadWatch{}
	lateRank(t, func() time.Time { w.dead = false; return time.Time{} }, w, func() {
		w.dead = true
		time.Sleep(5 * time.Millisecond)
	})
}
