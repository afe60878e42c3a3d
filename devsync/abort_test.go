package devsync

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A wait whose peer never signals ends, once the host sets the abort
// word, with an error naming the dead rank.
func TestSpinEndsOnAbort(t *testing.T) {
	var flag, abort atomic.Uint64
	flag.Store(6) // the previous call's signal: does not release epoch 7
	done := make(chan error, 1)
	go func() {
		done <- Spin(flag.Load, abort.Load, 16, AbortError{Rank: 0, Block: 3, Peer: 2, Phase: 1, Epoch: 7})
	}()
	select {
	case err := <-done:
		t.Fatalf("wait ended before the abort: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	abort.Store(AbortWord(2))
	err := <-done
	var ae *AbortError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 2, ae.Dead)
	assert.EqualError(t, err, "devsync: rank 0 block 3 waiting for rank 2 (phase 1, epoch 7): aborted: rank 2 is dead")
}

// A flag that arrives ends the wait even when the abort word is set: the
// data is there.
func TestPollPrefersTheFlag(t *testing.T) {
	done, err := Poll(7, AbortWord(1), AbortError{Epoch: 7})
	assert.True(t, done)
	assert.NoError(t, err)
	done, err = Poll(6, 0, AbortError{Epoch: 7})
	assert.False(t, done)
	assert.NoError(t, err)
	_, ok := DeadRank(0)
	assert.False(t, ok)
}
