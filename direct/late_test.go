package direct

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/memtransport"
)

// goneWatch reports rank 1 gone once gone is set; it checks at every poll.
type goneWatch struct{ gone bool }

func (w *goneWatch) Every() time.Duration { return time.Nanosecond }
func (w *goneWatch) Check() error {
	if w.gone {
		return errors.New("rank 1 has exited")
	}
	return nil
}

// lateHostRank runs a two-rank host allreduce until rank 0 has done its
// part and waits for rank 1's DONE, lets rank 1 finish and leave, then
// calls late(c) on rank 0's call, as an application computing between
// its polls would find it. Rank 0's next poll must find the call done:
// rank 1's DONE has arrived, so neither a deadline passed meanwhile nor a
// peer that has since left is a reason to fail it.
func lateHostRank(t *testing.T, w exec.Watch, late func(c *Call)) {
	t.Helper()
	j := newHostJob(2, 1, 5)
	j.net = memtransport.New(2, memtransport.Options{})
	j.buffers(coll.Allreduce, 64, false, rand.New(rand.NewPCG(5, 6)))
	want := j.want(t, coll.Allreduce, coll.Float32, coll.Sum)
	var calls [2]Call
	for r := range calls {
		cfg := Config{Collective: coll.Allreduce, Rank: r, Size: 2, Src: exec.HostRegion(j.src[r]), Dst: exec.HostRegion(j.dst[r]),
			Dtype: coll.Float32, Op: coll.Sum, Transport: j.net.Endpoint(r), Host: j.teams[r], Watch: w}
		require.NoError(t, calls[r].Begin(cfg))
	}
	poll := func(r int) bool {
		done, err := calls[r].Progress(time.Time{})
		require.NoError(t, err, "rank %d", r)
		return done
	}
	// Rank 1 sends its VERDICT and then waits for rank 0's, so that its
	// DONE comes only once rank 0 waits for it.
	require.False(t, poll(1))
	require.Equal(t, stVerdict, calls[1].state)
	for i := 0; calls[0].state != stFinishing; i++ {
		require.Less(t, i, 100000, "rank 0 never reached its DONE")
		require.False(t, poll(0), "rank 0 done before rank 1 said DONE")
	}
	for i := 0; !poll(1); i++ {
		require.Less(t, i, 100000, "rank 1 never finished")
	}
	late(&calls[0])
	done, err := calls[0].Progress(time.Time{})
	require.NoError(t, err)
	assert.True(t, done)
	for r := range j.dst {
		assert.Equal(t, want, j.dst[r], "rank %d", r)
	}
}

func TestCallPolledAfterItsDeadlineTakesWhatArrived(t *testing.T) {
	lateHostRank(t, nil, func(c *Call) { c.pace.Deadline = time.Now().Add(-time.Millisecond) })
}

func TestCallPolledAfterPeerLeftTakesWhatArrived(t *testing.T) {
	w := &goneWatch{}
	lateHostRank(t, w, func(*Call) { w.gone = true })
}
