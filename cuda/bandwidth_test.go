package cuda

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBandwidth measures the copy paths that goring's multi-path split
// (model/, ucx_mp/) chooses between, for comparison with docs/gpu.md's
// figures from the 2xH200 machine (PyTorch): one peer copy 380-394 GB/s,
// both directions at once about 376 GB/s each way, host-staged pipeline
// 51 GB/s with 8 MiB chunks and 23 GB/s with 2 MiB chunks. It runs only
// with GORING_CUDA_BENCH=1 (a few seconds on two GPUs):
//
//	GORING_CUDA_BENCH=1 ./cuda.test -test.run Bandwidth -test.v
//
// GB/s are 1e9 bytes per second of bytes delivered (not read+written).
func TestBandwidth(t *testing.T) {
	if os.Getenv(envBench) != "1" {
		t.Skipf("set %s=1 to measure copy bandwidth", envBench)
	}
	ds := devices(t, 2)
	d0, d1 := ds[0], ds[1]
	enablePeers(t, d0, d1)
	const maxBytes = 256 << 20
	alloc := func(d *Device, n int) *Buffer {
		b, err := d.Alloc(n)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, b.Free()) })
		return b
	}
	stream := func(d *Device) *Stream {
		s, err := d.NewStream()
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Destroy()) })
		return s
	}
	event := func(d *Device, timing bool) *Event {
		e, err := d.NewEvent(timing)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, e.Destroy()) })
		return e
	}
	a0, a0b := alloc(d0, maxBytes), alloc(d0, maxBytes)
	b1, b1b := alloc(d1, maxBytes), alloc(d1, maxBytes)
	s0, s1 := stream(d0), stream(d1)
	st0, en0 := event(d0, true), event(d0, true)
	st1, en1 := event(d1, true), event(d1, true)
	require.NoError(t, a0.Memset(0, maxBytes, 1))
	require.NoError(t, b1.Memset(0, maxBytes, 2))

	iters := func(n int) int {
		switch {
		case n <= 1<<20:
			return 200
		case n <= 16<<20:
			return 50
		}
		return 20
	}
	// timed queues copy() iters times on s between two events after three
	// untimed warm-ups and returns GB/s of n bytes per copy.
	timed := func(s *Stream, st, en *Event, n int, copy func() error) float64 {
		for i := 0; i < 3; i++ {
			require.NoError(t, copy())
		}
		k := iters(n)
		require.NoError(t, st.Record(s))
		for i := 0; i < k; i++ {
			require.NoError(t, copy())
		}
		require.NoError(t, en.Record(s))
		require.NoError(t, en.Synchronize())
		d, err := Elapsed(st, en)
		require.NoError(t, err)
		return float64(n) * float64(k) / d.Seconds() / 1e9
	}

	t.Logf("%-52s %10s %10s", "path", "bytes", "GB/s")
	for _, n := range []int{1 << 20, 16 << 20, 256 << 20} {
		push := timed(s0, st0, en0, n, func() error { return CopyAsync(s0, b1, 0, a0, 0, n) })
		t.Logf("%-52s %10d %10.1f", "peer GPU0->GPU1, GPU0's stream (cuMemcpyPeerAsync)", n, push)
		pull := timed(s1, st1, en1, n, func() error { return CopyAsync(s1, b1, 0, a0, 0, n) })
		t.Logf("%-52s %10d %10.1f", "peer GPU0->GPU1, GPU1's stream", n, pull)
		rev := timed(s1, st1, en1, n, func() error { return CopyAsync(s1, a0, 0, b1, 0, n) })
		t.Logf("%-52s %10d %10.1f", "peer GPU1->GPU0, GPU1's stream", n, rev)
	}

	// Both directions at once: each GPU's stream pushes to the other.
	for _, n := range []int{16 << 20, 256 << 20} {
		k := iters(n)
		for i := 0; i < 3; i++ {
			require.NoError(t, CopyAsync(s0, b1b, 0, a0, 0, n))
			require.NoError(t, CopyAsync(s1, a0b, 0, b1, 0, n))
		}
		require.NoError(t, s0.Synchronize())
		require.NoError(t, s1.Synchronize())
		require.NoError(t, st0.Record(s0))
		require.NoError(t, st1.Record(s1))
		for i := 0; i < k; i++ {
			require.NoError(t, CopyAsync(s0, b1b, 0, a0, 0, n))
			require.NoError(t, CopyAsync(s1, a0b, 0, b1, 0, n))
		}
		require.NoError(t, en0.Record(s0))
		require.NoError(t, en1.Record(s1))
		require.NoError(t, en0.Synchronize())
		require.NoError(t, en1.Synchronize())
		e0, err := Elapsed(st0, en0)
		require.NoError(t, err)
		e1, err := Elapsed(st1, en1)
		require.NoError(t, err)
		t.Logf("%-52s %10d %10.1f", "bidirectional: GPU0->GPU1 while GPU1->GPU0", n, float64(n)*float64(k)/e0.Seconds()/1e9)
		t.Logf("%-52s %10d %10.1f", "bidirectional: GPU1->GPU0 while GPU0->GPU1", n, float64(n)*float64(k)/e1.Seconds()/1e9)
	}

	// Pinned host memory: one direction at a time, GPU 0.
	h, err := d0.AllocHost(maxBytes)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, h.Free()) })
	for _, n := range []int{16 << 20, 256 << 20} {
		htod := timed(s0, st0, en0, n, func() error { return CopyHtoDAsync(s0, a0, 0, h, 0, n) })
		t.Logf("%-52s %10d %10.1f", "pinned host -> GPU0 (cuMemcpyHtoDAsync)", n, htod)
		dtoh := timed(s0, st0, en0, n, func() error { return CopyDtoHAsync(s0, h, 0, a0, 0, n) })
		t.Logf("%-52s %10d %10.1f", "GPU0 -> pinned host (cuMemcpyDtoHAsync)", n, dtoh)
	}

	// Host-staged GPU0 -> GPU1: chunk i goes DtoH on GPU 0's stream, an
	// event marks it, GPU 1's stream waits for the event and copies it
	// HtoD, so the two halves of successive chunks overlap (docs/gpu.md's
	// host path). Timed by the wall clock, since the events sit on two
	// devices. The result is checked byte for byte.
	want := pattern(maxBytes, 0x42)
	require.NoError(t, a0.CopyFromHost(0, want))
	for _, chunk := range []int{2 << 20, 8 << 20, 32 << 20} {
		nchunks := maxBytes / chunk
		evs := make([]*Event, nchunks)
		for i := range evs {
			evs[i] = event(d0, false)
		}
		run := func() {
			for i := 0; i < nchunks; i++ {
				off := i * chunk
				require.NoError(t, CopyDtoHAsync(s0, h, off, a0, off, chunk))
				require.NoError(t, evs[i].Record(s0))
				require.NoError(t, s1.WaitEvent(evs[i]))
				require.NoError(t, CopyHtoDAsync(s1, b1b, off, h, off, chunk))
			}
			require.NoError(t, s1.Synchronize())
		}
		run() // warm-up
		const reps = 5
		start := time.Now()
		for r := 0; r < reps; r++ {
			run()
		}
		el := time.Since(start)
		t.Logf("%-52s %10d %10.1f", fmt.Sprintf("host-staged GPU0->pinned->GPU1, chunk %d MiB", chunk>>20), maxBytes, float64(maxBytes)*reps/el.Seconds()/1e9)
	}
	got := make([]byte, maxBytes)
	require.NoError(t, b1b.CopyToHost(got, 0))
	require.True(t, bytes.Equal(want, got), "host-staged copy delivered the bytes")
}
