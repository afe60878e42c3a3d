package devsync

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tags are never 0 (a cleared line) and repeat only a period apart.
func TestLLTag(t *testing.T) {
	assert.Equal(t, uint32(2), LLTag(FirstEpoch))
	assert.Equal(t, uint32(1), LLTag(LLTagPeriod))
	assert.Equal(t, LLTag(5), LLTag(5+LLTagPeriod))
	assert.NotEqual(t, LLTag(5), LLTag(5+LLTagPeriod-1))
	for _, e := range []Epoch{0, 1, LLTagPeriod - 1, LLTagPeriod, 1 << 32, 1<<33 - 2, 1<<64 - 1} {
		assert.NotZero(t, LLTag(e), "epoch %d", e)
	}
}

// llClearHolds: a line that call w (writer) left in its parity of an
// area, which call e of the same parity and tag would take for its own,
// is cleared in between by a clear the reuse rule allows: before a call
// c with w < c < e (the writer's lines were read at w, and the clear is
// on the reader's stream before its kernel of c, before any peer's
// lines of c+1) whose cleared parity, that of c+1, is e's.
func llClearHolds(period, every, upTo uint64) (w, e uint64, ok bool) {
	for w = 1; w < upTo; w++ {
		for e = w + period; e < upTo; e += period {
			if (e-w)%2 != 0 || llTag(w, period) != llTag(e, period) {
				continue // another parity's area, or another tag
			}
			cleared := false
			for c := w + 1; c < e && !cleared; c++ {
				p, clear := llClearBefore(c, every)
				cleared = clear && p == int(e&1)
			}
			if !cleared {
				return w, e, false
			}
		}
	}
	return 0, 0, true
}

// The clears come before a tag repeats: every pair of calls of the same
// tag and parity has a clear of that parity between them, on a scale
// small enough to try every pair (period 63 against clears every 16, as
// 2^32-1 against 2^30); and with clears rarer than the period allows,
// the check finds the pair that would mistake an old line for its own.
func TestLLClearsComeBeforeATagRepeats(t *testing.T) {
	_, _, ok := llClearHolds(63, 16, 2000)
	require.True(t, ok)
	w, e, ok := llClearHolds(63, 256, 2000)
	require.False(t, ok, "clears every 256 calls cannot cover a tag period of 63")
	t.Logf("with clears every 256 calls, call %d would read call %d's line as its own", e, w)
	// The shipped constants keep the same proportion or better.
	require.GreaterOrEqual(t, uint64(LLTagPeriod), uint64(2*llClearEvery))
	p, clear := LLClearBefore(3 << 30)
	assert.True(t, clear)
	assert.Equal(t, 1, p)
	p, clear = LLClearBefore(3<<30 + 1)
	assert.True(t, clear)
	assert.Equal(t, 0, p)
	_, clear = LLClearBefore(3<<30 + 2)
	assert.False(t, clear)
}

// PollLL: done only when both words of the line hold the call's tag; an
// abort error naming the dead rank otherwise once the abort word is set.
func TestPollLL(t *testing.T) {
	pos := AbortError{Rank: 1, Block: 2, Peer: 0, Epoch: 7}
	tag := LLTag(7)
	done, err := PollLL(tag, tag, AbortWord(3), pos)
	assert.True(t, done)
	assert.NoError(t, err)
	for _, w := range [][2]uint32{{tag, LLTag(5)}, {0, tag}, {LLTag(9), LLTag(9)}} {
		done, err = PollLL(w[0], w[1], 0, pos)
		assert.False(t, done)
		assert.NoError(t, err)
	}
	_, err = PollLL(tag, 0, AbortWord(3), pos)
	var ae *AbortError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 3, ae.Dead)
}
