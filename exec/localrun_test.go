package exec

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
)

// laterLocal finishes every step later, through Poll, in the order
// started, and records that order; inOrder says so to a LocalRun.
type laterLocal struct {
	inOrder bool
	started []uint64
	pending []Completion
	cancels []uint64
}

func (l *laterLocal) Local(op *LocalOp) (bool, error) {
	HostLocal{}.Local(op)
	l.started = append(l.started, op.Token)
	l.pending = append(l.pending, Completion{Token: op.Token})
	return false, nil
}

func (l *laterLocal) Poll(dst []Completion) []Completion {
	dst = append(dst, l.pending...)
	l.pending = l.pending[:0]
	return dst
}

func (l *laterLocal) Pending() int { return len(l.pending) }

func (l *laterLocal) Cancel(tok uint64) error {
	l.cancels = append(l.cancels, tok)
	return nil
}

func (l *laterLocal) InOrder() bool { return l.inOrder }

// A LocalRun starts a step only once its dependencies have finished, all
// at once on an in-order executor, and computes what the steps say.
func TestLocalRunFollowsDependencies(t *testing.T) {
	a, b, sum := []byte{1, 2}, []byte{10, 20}, make([]byte, 2)
	out := make([]byte, 2)
	steps := []LocalStep{
		{Kind: sched.OpCopy, Dsts: []Region{HostRegion(sum)}, Srcs: []Region{HostRegion(a)}},
		{Kind: sched.OpReduce, Dsts: []Region{HostRegion(sum)}, Srcs: []Region{HostRegion(b)}, Deps: []int{0}},
		{Kind: sched.OpCopy, Dsts: []Region{HostRegion(out)}, Srcs: []Region{HostRegion(sum)}, Deps: []int{1}},
	}
	const base = uint64(7) << 24
	for _, inOrder := range []bool{false, true} {
		clear(sum)
		clear(out)
		ex := &laterLocal{inOrder: inOrder}
		var run LocalRun
		run.Begin(ex, steps, base, coll.Uint8, coll.Sum)
		rounds := 0
		for !run.Done() {
			_, err := run.Start()
			require.NoError(t, err)
			wait := time.Now().Add(time.Second)
			_, err = run.Poll(time.Now(), &wait)
			require.NoError(t, err)
			rounds++
		}
		assert.Equal(t, []byte{11, 22}, out, "in order %v", inOrder)
		assert.Equal(t, []uint64{base, base | 1, base | 2}, ex.started)
		if inOrder {
			assert.Equal(t, 1, rounds, "an in-order executor gets every step at once")
		} else {
			assert.Equal(t, 3, rounds, "each step waits for the one before")
		}
		assert.True(t, run.Mine(base|2))
		assert.False(t, run.Mine(base+1<<24))
	}
}

// Cancel withdraws the steps started and not finished; a failed step's
// completion fails the run, and a fused step needs a MultiLocal.
func TestLocalRunCancelsAndFails(t *testing.T) {
	x, y := make([]byte, 4), make([]byte, 4)
	steps := []LocalStep{
		{Kind: sched.OpCopy, Dsts: []Region{HostRegion(x)}, Srcs: []Region{HostRegion(y)}},
		{Kind: sched.OpCopy, Dsts: []Region{HostRegion(y)}, Srcs: []Region{HostRegion(x)}},
	}
	ex := &laterLocal{inOrder: true}
	var run LocalRun
	run.Begin(ex, steps, 0, coll.Uint8, coll.Sum)
	_, err := run.Start()
	require.NoError(t, err)
	require.NoError(t, run.Step(Completion{Token: 0}))
	assert.NoError(t, errors.Join(run.Cancel()...))
	assert.Equal(t, []uint64{1}, ex.cancels, "only the unfinished step")

	run.Begin(ex, steps, 0, coll.Uint8, coll.Sum)
	_, err = run.Start()
	require.NoError(t, err)
	assert.ErrorContains(t, run.Step(Completion{Token: 1, Err: assert.AnError}), "copy 1 of 2")

	fused := []LocalStep{{Kind: sched.OpReduce, Dsts: []Region{HostRegion(x)}, Srcs: []Region{HostRegion(x), HostRegion(y)}}}
	run.Begin(HostLocal{}, fused, 0, coll.Uint8, coll.Sum)
	_, err = run.Start()
	assert.ErrorContains(t, err, "runs no fused steps")
}
