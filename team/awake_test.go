package team

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeepAwakeOption(t *testing.T) {
	o, err := parseOptions("")
	require.NoError(t, err)
	assert.Equal(t, time.Duration(0), o.keepAwake, "off by default: it costs a share of a core")
	for v, want := range map[string]time.Duration{"off": 0, "0": 0, "NO": 0, "1ms": time.Millisecond, "9ms": 9 * time.Millisecond, "500us": 500 * time.Microsecond} {
		o, err := parseOptions("keepawake=" + v)
		require.NoError(t, err, v)
		assert.Equal(t, want, o.keepAwake, v)
	}
	// 10 ms and more: the runtime retakes a P in a system call that long,
	// so the keeper would do nothing.
	for _, bad := range []string{"10ms", "1s", "-1ms", "fast", "5"} {
		_, err := parseOptions("keepawake=" + bad)
		assert.ErrorContains(t, err, "keepawake", bad)
	}
}

// The keeper is shared: it runs while any context wants it, stops with the
// last one (its goroutine gone), and a release called twice counts once.
func TestKeepAwakeSharedAndStopped(t *testing.T) {
	before := runtime.NumGoroutine()
	assert.False(t, keeperRunning())
	assert.False(t, keeperRunning() || func() bool { keepAwake(0)(); return keeperRunning() }(), "an interval of 0 starts nothing")

	a := keepAwake(time.Millisecond)
	b := keepAwake(time.Millisecond)
	assert.True(t, keeperRunning())
	// At most: goroutines of earlier tests may still be ending.
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+1, "one keeper for both")
	a()
	a()
	assert.True(t, keeperRunning(), "b still wants it")
	b()
	assert.False(t, keeperRunning())
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "the keeper's goroutine ended before the last release returned")
}

// Under mpirun's binding to one core GOMAXPROCS is 1; the keeper needs a P
// of its own besides the caller's.
func TestKeepAwakeRaisesGOMAXPROCS(t *testing.T) {
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	release := keepAwake(time.Millisecond)
	defer release()
	assert.Equal(t, 2, runtime.GOMAXPROCS(0))
}

// A context keeps the runtime awake from create to close, unless told not to.
func TestContextKeepsAwake(t *testing.T) {
	for opts, want := range map[string]bool{"tls=self,tcp;keepawake=5ms": true, "tls=self,tcp": false, "tls=self,tcp;keepawake=off": false} {
		ctx, err := NewContext(opts, testTable{})
		require.NoError(t, err)
		assert.Equal(t, want, keeperRunning(), opts)
		require.NoError(t, ctx.Close())
		assert.False(t, keeperRunning(), opts)
	}
}

// Without collectives the keeper parks (sysmon may sleep again); the next
// collective wakes it.
func TestKeeperParksWhenIdle(t *testing.T) {
	release := keepAwake(time.Millisecond)
	defer release()
	CollectiveStarts()
	assert.False(t, keeperParked(), "a collective just started")
	assert.Eventually(t, keeperParked, 10*keeperIdleAfter, time.Millisecond, "parked after %v without collectives", keeperIdleAfter)
	CollectiveStarts()
	assert.Eventually(t, func() bool { return !keeperParked() }, time.Second, time.Millisecond, "a collective wakes it")
}
