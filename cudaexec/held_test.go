package cudaexec

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// While a call runs under a stream its caller holds (SetMayWait says no),
// the stager allocates no pinned memory and copies Go memory on its own
// stream, and the bytes arrive both ways; with waiting allowed again it
// pins as before.
func TestStagerWhileTheDeviceMayNotBeWaitedFor(t *testing.T) {
	g := openGPU(t)
	s, err := NewStager(0)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	mayWait := false
	s.SetMayWait(func() bool { return mayWait })
	require.NoError(t, s.Prepare())
	dev, err := g.Alloc(1 << 20)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Free(dev)) })
	for round, wait := range []bool{false, true} {
		mayWait = wait
		for _, n := range []int64{1, 4097, 1 << 20} {
			want := bytes.Repeat([]byte{byte(round*7 + int(n%251))}, int(n))
			b, err := s.Buffer(n)
			require.NoError(t, err)
			copy(b, want)
			require.NoError(t, s.ToDevice(dev.Slice(0, n), b))
			clear(b)
			require.NoError(t, s.ToHost(b, dev.Slice(0, n)))
			assert.Equal(t, want, b, "%d bytes, may wait %v", n, wait)
			s.Release(b)
		}
		if !wait {
			assert.Zero(t, s.held, "pinned memory allocated while the device may not be waited for")
		} else {
			assert.Positive(t, s.held, "no pinned memory where it may be allocated")
		}
	}
}

// Prepare makes the direct streams to the peers named; while the device
// may not be waited for, a copy to another peer or on another lane goes
// on a stream the engine has instead of a new one, and Prepare makes one
// stream at most.
func TestEngineMakesNoStreamWhileTheDeviceMayNotBeWaitedFor(t *testing.T) {
	openGPU(t)
	e := NewEngine()
	t.Cleanup(func() { require.NoError(t, e.Close()) })
	mayWait := true
	e.SetMayWait(func() bool { return mayWait })
	require.NoError(t, e.Prepare(0, []int{1, 2}))
	require.Len(t, e.streams, 2)
	assert.GreaterOrEqual(t, len(e.events[0]), 2)
	mayWait = false
	d, err := e.device(0)
	require.NoError(t, err)
	own1 := e.streams[streamKey{dev: 0, peer: 1}]
	s, err := e.stream(d, 1, 3)
	require.NoError(t, err)
	assert.Same(t, own1, s, "another lane to peer 1 shares its direct stream")
	s, err = e.stream(d, 5, 0)
	require.NoError(t, err)
	assert.NotNil(t, s)
	assert.Len(t, e.streams, 2, "a stream made while the device may not be waited for")
	mayWait = true
	_, err = e.stream(d, 5, 0)
	require.NoError(t, err)
	assert.Len(t, e.streams, 3)

	held := NewEngine()
	t.Cleanup(func() { require.NoError(t, held.Close()) })
	held.SetMayWait(func() bool { return false })
	require.NoError(t, held.Prepare(0, []int{1, 2, 3}))
	assert.Len(t, held.streams, 1, "one stream for the copies to share")
}
