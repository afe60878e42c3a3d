package exec_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/memtransport"
)

// A UCC team layer cannot block in its progress function: it polls. Here
// one goroutine drives every rank's Call with zero waits, round-robin, as
// a single progress thread would, and the allgather still completes with
// the right contents, twice in a row on the same machines and Calls.
func TestCallProgressesWithoutBlocking(t *testing.T) {
	for i, mode := range transportModes {
		const n, block = 5, 333
		plan := ringAllgather(n, block)
		net := memtransport.New(n, mode)
		machines := make([]*exec.Machine, n)
		outs := make([][]byte, n)
		want := []byte{}
		for r := 0; r < n; r++ {
			in := make([]byte, block)
			for k := range in {
				in[k] = byte(r*13 + k)
			}
			want = append(want, in...)
			outs[r] = make([]byte, n*block)
			m, err := exec.New(&plan.Ranks[r], exec.HostBuffers(in, outs[r], nil), exec.ConfigFor(plan, 0, 0))
			require.NoError(t, err)
			machines[r] = m
		}
		calls := make([]exec.Call, n)
		for round := 0; round < 2; round++ {
			for r := range outs {
				clear(outs[r])
				require.NoError(t, calls[r].Begin(machines[r], net.Endpoint(r), time.Now().Add(10*time.Second)))
			}
			polls := 0
			for left := n; left > 0; {
				left = 0
				for r := range calls {
					done, err := calls[r].Progress(time.Time{})
					require.NoError(t, err, "case %d round %d rank %d", i, round, r)
					if !done {
						left++
					}
				}
				polls++
				require.Less(t, polls, 1_000_000, "case %d: no progress", i)
			}
			for r := range outs {
				assert.Equal(t, want, outs[r], "case %d round %d rank %d", i, round, r)
			}
			done, err := calls[0].Progress(time.Time{})
			assert.True(t, done, "a finished call stays finished")
			assert.NoError(t, err)
		}
	}
}

// A call whose peer never takes part fails at its deadline through
// Progress, naming the step it waited on; the failure sticks, and Abort
// after it returns the same error.
func TestCallDeadlineAndAbort(t *testing.T) {
	plan := ringAllgather(2, 8)
	net := memtransport.New(2, memtransport.Options{})
	m, err := exec.New(&plan.Ranks[0], exec.HostBuffers(make([]byte, 8), make([]byte, 16), nil), exec.ConfigFor(plan, 0, 0))
	require.NoError(t, err)
	var c exec.Call
	require.NoError(t, c.Begin(m, net.Endpoint(0), time.Now().Add(30*time.Millisecond)))
	var perr error
	for perr == nil {
		var done bool
		done, perr = c.Progress(time.Now().Add(5 * time.Millisecond))
		require.False(t, done)
	}
	assert.True(t, errors.Is(perr, exec.ErrDeadline), perr.Error())
	var se *exec.StepError
	require.ErrorAs(t, perr, &se)
	assert.Contains(t, perr.Error(), "rank 0")
	_, again := c.Progress(time.Time{})
	assert.Equal(t, perr, again)
	assert.Equal(t, perr, c.Abort(errors.New("caller gave up")))

	// Abort of a call in flight cancels it with the caller's cause.
	m2, err := exec.New(&plan.Ranks[0], exec.HostBuffers(make([]byte, 8), make([]byte, 16), nil), exec.ConfigFor(plan, 0, 0))
	require.NoError(t, err)
	var c2 exec.Call
	require.NoError(t, c2.Begin(m2, net.Endpoint(0), time.Now().Add(time.Minute)))
	done, err := c2.Progress(time.Time{})
	require.NoError(t, err)
	require.False(t, done)
	cause := errors.New("team destroyed")
	aerr := c2.Abort(cause)
	assert.ErrorIs(t, aerr, cause)
}

// fakeWatch reports a dead peer from its n-th check on.
type fakeWatch struct {
	checks, dieAt int
}

func (w *fakeWatch) Every() time.Duration { return time.Millisecond }
func (w *fakeWatch) Check() error {
	w.checks++
	if w.dieAt > 0 && w.checks >= w.dieAt {
		return errors.New("rank 1 has exited")
	}
	return nil
}

// Without a deadline a call waits for a late peer as long as it takes
// (here 60 ms of polls past any short deadline) and completes when the
// peer comes; a Watch that finds a dead peer fails the call with it as the
// cause, naming the step it waited on.
func TestCallWithoutDeadlineWaitsAndWatchFails(t *testing.T) {
	plan := ringAllgather(2, 8)
	net := memtransport.New(2, memtransport.Options{})
	var calls [2]exec.Call
	var ms [2]*exec.Machine
	for r := range ms {
		m, err := exec.New(&plan.Ranks[r], exec.HostBuffers(make([]byte, 8), make([]byte, 16), nil), exec.ConfigFor(plan, 0, 0))
		require.NoError(t, err)
		ms[r] = m
	}
	w := &fakeWatch{}
	calls[0].SetWatch(w)
	require.NoError(t, calls[0].Begin(ms[0], net.Endpoint(0), time.Time{}))
	for end := time.Now().Add(60 * time.Millisecond); time.Now().Before(end); {
		done, err := calls[0].Progress(time.Now().Add(time.Millisecond))
		require.NoError(t, err)
		require.False(t, done)
	}
	assert.Greater(t, w.checks, 5, "the watch runs while the call waits")
	require.NoError(t, calls[1].Begin(ms[1], net.Endpoint(1), time.Time{}))
	for left := 2; left > 0; {
		left = 0
		for r := range calls {
			done, err := calls[r].Progress(time.Time{})
			require.NoError(t, err)
			if !done {
				left++
			}
		}
	}

	// Again, with the peer dead this time.
	w.dieAt = w.checks + 3
	require.NoError(t, calls[0].Begin(ms[0], net.Endpoint(0), time.Time{}))
	var err error
	for err == nil {
		_, err = calls[0].Progress(time.Now().Add(time.Millisecond))
	}
	assert.ErrorContains(t, err, "rank 1 has exited")
	var se *exec.StepError
	require.ErrorAs(t, err, &se)
}
