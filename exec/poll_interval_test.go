package exec_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// lateLocal is an AsyncLocal whose steps finish on the first Poll after
// finishAfter has passed since they started; every says how often it
// wants to be polled (exec.PollInterval, 0: the default).
type lateLocal struct {
	every, finishAfter time.Duration
	started            time.Time
	tokens             []uint64
}

func (l *lateLocal) Local(op *exec.LocalOp) (bool, error) {
	l.started = time.Now()
	l.tokens = append(l.tokens, op.Token)
	return false, nil
}
func (l *lateLocal) Pending() int                { return len(l.tokens) }
func (l *lateLocal) Cancel(uint64) error         { l.tokens = nil; return nil }
func (l *lateLocal) PollInterval() time.Duration { return l.every }
func (l *lateLocal) Poll(dst []exec.Completion) []exec.Completion {
	if len(l.tokens) > 0 && time.Since(l.started) >= l.finishAfter {
		for _, t := range l.tokens {
			dst = append(dst, exec.Completion{Token: t})
		}
		l.tokens = nil
	}
	return dst
}

// idleTransport has nothing in flight: Wait sleeps until the deadline and
// records how far ahead each deadline was.
type idleTransport struct{ waits []time.Duration }

func (t *idleTransport) PostSend(*exec.Post) error { return nil }
func (t *idleTransport) PostRecv(*exec.Post) error { return nil }
func (t *idleTransport) Cancel(uint64) error       { return nil }
func (t *idleTransport) Wait(deadline time.Time, dst []exec.Completion) ([]exec.Completion, error) {
	t.waits = append(t.waits, time.Until(deadline))
	time.Sleep(time.Until(deadline))
	return dst, nil
}

// While device work runs, the driver never waits on the network longer
// than the AsyncLocal's PollInterval (exec.PollEvery without one), so a
// finished step is seen that soon.
func TestAsyncLocalPollInterval(t *testing.T) {
	for _, every := range []time.Duration{0, 2 * time.Millisecond} {
		p := &sched.RankProgram{Rank: 0, Sizes: sched.Sizes{Src: 4, Dst: 4}}
		p.Copy(src(0), dst(0), 4)
		local := &lateLocal{every: every, finishAfter: 20 * time.Millisecond}
		m, err := exec.New(p, bufs(4, 4, 0), exec.Config{Collective: coll.Allgather, Algorithm: "ring", NRanks: 1, Local: local})
		require.NoError(t, err)
		tr := &idleTransport{}
		require.NoError(t, exec.Run(context.Background(), m, tr, time.Now().Add(5*time.Second)))
		want := exec.PollEvery
		if every > 0 {
			want = every
		}
		require.NotEmpty(t, tr.waits, "every %v", every)
		for i, w := range tr.waits {
			require.LessOrEqual(t, w, want, "every %v: wait %d of %d", every, i, len(tr.waits))
		}
		if every > 0 { // long enough to see on any machine
			require.Greater(t, tr.waits[0], want/2, "every %v: the first wait uses the interval, not a spin", every)
		}
	}
}
