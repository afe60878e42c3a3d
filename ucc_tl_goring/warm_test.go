//go:build ucc

package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The warmer wakes on its timer while collectives are frequent, parks
// after warmWindow without one, resumes on the next, and is gone when its
// last user releases it.
func TestWarmerLifecycle(t *testing.T) {
	w := &warmer{}
	w.acquire(time.Millisecond)
	w.acquire(time.Millisecond) // a second context shares it
	done := w.done
	time.Sleep(30 * time.Millisecond)
	require.Greater(t, w.wakes.Load(), int64(5), "the loop wakes every period while calls are recent")

	require.Eventually(t, w.parked.Load, 2*time.Second, time.Millisecond, "parks after the window")
	n := w.wakes.Load()
	time.Sleep(20 * time.Millisecond)
	require.LessOrEqual(t, w.wakes.Load(), n+1, "a parked loop does not wake")

	w.touch()
	require.Eventually(t, func() bool { return w.wakes.Load() > n+3 }, 2*time.Second, time.Millisecond, "a call resumes it")

	w.release(time.Millisecond)
	select {
	case <-done:
		t.Fatal("the loop ended while a user remained")
	default:
	}
	w.release(time.Millisecond)
	select {
	case <-done:
	default:
		t.Fatal("release of the last user returned before the loop ended")
	}
}

// wake_us=0 is no warmer at all; bad values are refused.
func TestWakeOption(t *testing.T) {
	o, err := parseOptions("")
	require.NoError(t, err)
	require.Equal(t, defaultWake, o.wake)
	o, err = parseOptions("wake_us=0")
	require.NoError(t, err)
	require.Zero(t, o.wake)
	w := &warmer{}
	w.acquire(o.wake)
	require.Nil(t, w.done, "no goroutine for a zero period")
	for _, bad := range []string{"wake_us=-1", "wake_us=x", "wake_us=2000000"} {
		_, err := parseOptions(bad)
		require.Error(t, err, bad)
	}
}
