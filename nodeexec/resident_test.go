package nodeexec

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/devsync"
)

// pairInProcess is a team of two Locals driven by this goroutine: on
// GPUs 0 and 1 with peer access where the driver shows two, else both on
// GPU 0 (streams of one context: both ranks' kernels run at once). The
// regions are mapped by address, not IPC (one process). It skips
// without a GPU.
func pairInProcess(t *testing.T, slot int) [2]*Local {
	t.Helper()
	n := gpusOrSkip(t)
	var devs [2]*cuda.Device
	for r := range devs {
		ord := 0
		if n >= 2 {
			ord = r
		}
		d, err := cuda.Open(ord)
		require.NoError(t, err)
		t.Cleanup(func() { _ = d.Close() })
		devs[r] = d
	}
	if n >= 2 {
		for r := range devs {
			if err := devs[r].EnablePeerAccess(devs[1-r]); err != nil {
				t.Skipf("no peer access between GPUs 0 and 1: %v", err)
			}
		}
	}
	var ls [2]*Local
	for r := range ls {
		l, err := New(devs[r], r, 2, slot)
		require.NoError(t, err)
		ls[r] = l
	}
	t.Cleanup(func() {
		for _, l := range ls {
			require.NoError(t, l.Close())
		}
	})
	ptrs := []cuda.DevicePtr{ls[0].scratch.Ptr(), ls[1].scratch.Ptr()}
	for _, l := range ls {
		l.ptrs = ptrs
	}
	return ls
}

// runPair begins c on both ranks (c.In, c.Out per rank) and polls both
// until they end.
func runPair(t *testing.T, ls [2]*Local, cs [2]Call) {
	t.Helper()
	for r, l := range ls {
		require.NoError(t, l.Begin(cs[r]), "rank %d", r)
	}
	deadline := time.Now().Add(10 * time.Second)
	for r, l := range ls {
		for {
			done, err := l.Progress()
			require.NoError(t, err, "rank %d", r)
			if done {
				break
			}
			require.True(t, time.Now().Before(deadline), "rank %d's call did not end", r)
		}
	}
}

func f32s(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// Back-to-back calls are handed to the kernel still on the GPU, which
// reads each call's input, not the last one's: every output is compared
// with the sum of that call's inputs. Between them come calls that a
// resident kernel cannot take (another kernel, a call in pieces, a call
// after a gap longer than the linger), which must run too, and after
// which calls are handed again. Every call's inputs are copied to the
// GPU before the first (a synchronous copy from pageable memory would
// wait for a lingering kernel: TestResidentBench); the outputs are
// copied back after each call.
func TestResidentKernelTakesBackToBackCalls(t *testing.T) {
	const slot = 64 << 10
	ls := pairInProcess(t, slot)
	for _, l := range ls {
		l.SetLinger(2 * time.Millisecond)
	}
	const most = 4 * slot / 4 // float32 elements: four slots (an allreduce in pieces)
	const calls = 300
	shape := func(i int) Call {
		count := 1000 + 38*(i%50) // float32: up to 11.2 KiB, one grid; whole 8-byte words (LL calls)
		c := Call{Collective: coll.Allreduce, Dtype: coll.Float32, Op: coll.Sum, Count: count}
		switch {
		case i%60 == 30:
			c.Collective = coll.Allgather // count: each rank's block
		case i%100 == 50:
			c.Count = most
		}
		return c
	}
	var in, out [2]*cuda.Buffer
	var ins [2][][]float32
	for r, l := range ls {
		var err error
		in[r], err = l.dev.Alloc(4 * most * calls)
		require.NoError(t, err)
		out[r], err = l.dev.Alloc(2 * 4 * most)
		require.NoError(t, err)
		t.Cleanup(func() { in[r].Free(); out[r].Free() })
		all := make([]float32, most*calls)
		for i := range calls {
			v := make([]float32, shape(i).Count)
			for j := range v {
				v[j] = float32((r+1)*(j%97) + i)
			}
			ins[r] = append(ins[r], v)
			copy(all[i*most:], v)
		}
		require.NoError(t, in[r].CopyFromHost(0, f32bytes(all)))
	}
	for i := range calls {
		c := shape(i)
		if i%100 == 75 {
			time.Sleep(5 * time.Millisecond) // the linger runs out
		}
		n := c.Count
		var cs [2]Call
		for r := range ls {
			cs[r] = c
			cs[r].In, cs[r].Out = in[r].Ptr()+cuda.DevicePtr(4*most*i), out[r].Ptr()
		}
		runPair(t, ls, cs)
		for r := range ls {
			want := make([]float32, 0, 2*n)
			if c.Collective == coll.Allgather {
				want = append(append(want, ins[0][i]...), ins[1][i]...)
			} else {
				for j := range n {
					want = append(want, ins[0][i][j]+ins[1][i][j])
				}
			}
			got := make([]byte, 4*len(want))
			require.NoError(t, out[r].CopyToHost(got, 0))
			if !assert.Equal(t, want, f32s(got), "call %d (%s of %d), rank %d", i, c.Collective, c.Count, r) {
				t.FailNow()
			}
		}
	}
	for r, l := range ls {
		t.Logf("rank %d: %d of %d calls handed to a resident kernel", r, l.Handed(), calls)
		assert.Greater(t, l.Handed(), calls/2, "rank %d: back-to-back calls were launched, not handed", r)
	}
}

// lingeringPair is pairInProcess with the linger set and calls in-place
// allreduces of 4 KiB run back to back: from the second on, a kernel
// stays after each.
func lingeringPair(t *testing.T, linger time.Duration, calls int) [2]*Local {
	t.Helper()
	ls := pairInProcess(t, 16<<10)
	var cs [2]Call
	for r, l := range ls {
		l.SetLinger(linger)
		buf, err := l.dev.Alloc(4096)
		require.NoError(t, err)
		t.Cleanup(func() { buf.Free() })
		cs[r] = Call{Collective: coll.Allreduce, Dtype: coll.Float32, Op: coll.Sum, Count: 1024, In: buf.Ptr(), Out: buf.Ptr()}
	}
	for range calls {
		runPair(t, ls, cs)
	}
	return ls
}

// A kernel lingering far longer than the test leaves when the host tells
// it to: Close returns at once, with the stream idle, rather than after
// the linger.
func TestCloseEndsALingeringKernel(t *testing.T) {
	ls := lingeringPair(t, time.Hour, 3) // the first call's kernel leaves at once (no call before it); the second stays
	for r, l := range ls {
		require.True(t, l.res.live, "rank %d: no resident kernel after three calls back to back", r)
		idle, err := l.stream.Done()
		require.NoError(t, err)
		require.False(t, idle, "rank %d: the resident kernel left before its linger", r)
	}
	began := time.Now()
	for r, l := range ls {
		require.NoError(t, l.Close(), "rank %d", r)
		ls[r] = l
	}
	assert.Less(t, time.Since(began), parkedWaitMax, "Close waited for the linger, not the stop word")
	// The cleanup closes them again: a Close after Close must be harmless.
}

// A device-wide synchronisation waits for a lingering kernel only as
// long as its linger: the kernel leaves by itself.
func TestDeviceSyncWaitsOnlyTheLinger(t *testing.T) {
	const linger = 200 * time.Millisecond
	ls := lingeringPair(t, linger, 2)
	require.True(t, ls[0].res.live)
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		done <- ls[0].dev.Synchronize()
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(linger + 5*time.Second):
		t.Fatal("a device synchronisation still waits for a lingering kernel long after its linger")
	}
	for r, l := range ls {
		_, err := l.stream.Done()
		require.NoError(t, err, "rank %d", r)
	}
	assert.Equal(t, uint64(0), ls[0].ring.Load(devsync.RingStop), "nothing told the kernel to leave: it left by itself")
}

// TestResidentBench: the host's time a call, every rank in a goroutine
// of its own (as ranks are processes of their own) looping over its
// calls, each posted and polled to its end: with a launch a call (no
// linger) and handed to the resident kernel (DefaultLinger), alternating
// in rounds. Set GORING_CUDA_BENCH=1.
func TestResidentBench(t *testing.T) {
	if os.Getenv("GORING_CUDA_BENCH") == "" {
		t.Skip("set GORING_CUDA_BENCH=1 to measure")
	}
	const slot = 4 << 20
	ls := pairInProcess(t, slot)
	var buf [2]*cuda.Buffer
	for r, l := range ls {
		var err error
		buf[r], err = l.dev.Alloc(2 * slot)
		require.NoError(t, err)
		t.Cleanup(func() { buf[r].Free() })
		require.NoError(t, buf[r].Memset(0, 2*slot, 0))
	}
	fmt.Printf("node calls of a pair in one process (%s), host us per call, mean of each rank's loop, the slower rank\n", must(ls[0].dev.Name()))
	fmt.Printf("%-16s %10s %10s %10s %8s\n", "collective", "bytes", "launch", "resident", "handed")
	const rounds, per = 5, 400
	for _, cl := range []coll.Collective{coll.Allreduce, coll.Allgather, coll.ReduceScatter} {
		for bytes := 16 << 10; bytes <= 1<<20; bytes *= 4 {
			c := Call{Collective: cl, Dtype: coll.Float32, Op: coll.Sum, Count: bytes / 4}
			switch cl {
			case coll.Allgather:
				c.Count = bytes / 2 // bytes of each rank's block: the output is bytes
			case coll.ReduceScatter:
				c.Count = bytes / 4 / 2
			}
			var sum [2]time.Duration
			handed := 0
			for round := range 2 * rounds {
				linger := time.Duration(0)
				if round%2 == 1 {
					linger = DefaultLinger
				}
				var took [2]time.Duration
				var wg sync.WaitGroup
				for r, l := range ls {
					l.SetLinger(linger)
					wg.Add(1)
					go func() {
						defer wg.Done()
						runtime.LockOSThread()
						defer runtime.UnlockOSThread()
						cc := c
						cc.In, cc.Out = buf[r].Ptr(), buf[r].Ptr()+cuda.DevicePtr(slot)
						began := time.Now()
						for range per {
							if err := l.Begin(cc); err != nil {
								t.Error(err)
								return
							}
							for {
								done, err := l.Progress()
								if err != nil {
									t.Error(err)
									return
								}
								if done {
									break
								}
							}
						}
						took[r] = time.Since(began)
					}()
				}
				wg.Wait()
				require.False(t, t.Failed())
				slower := max(took[0], took[1])
				sum[round%2] += slower
				if round%2 == 1 {
					handed = ls[0].Handed()
				}
			}
			us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / (rounds * per) }
			fmt.Printf("%-16s %10d %10.2f %10.2f %8d\n", cl, bytes, us(sum[0]), us(sum[1]), handed)
		}
	}
	// What a caller's synchronous copy costs beside a lingering kernel
	// (to pageable host memory, and from it): the kernel leaves only at
	// its linger if the copy waits for it.
	const linger = 5 * time.Millisecond
	for _, l := range ls {
		l.SetLinger(linger)
	}
	c := Call{Collective: coll.Allreduce, Dtype: coll.Float32, Op: coll.Sum, Count: 1024}
	var cs [2]Call
	for r := range ls {
		cs[r] = c
		cs[r].In, cs[r].Out = buf[r].Ptr(), buf[r].Ptr()+cuda.DevicePtr(slot)
	}
	small := make([]byte, 4096)
	for _, dir := range []string{"to host", "from host"} {
		for range 2 {
			runPair(t, ls, cs)
		}
		lingering := ls[0].res.live
		began := time.Now()
		if dir == "to host" {
			require.NoError(t, buf[0].CopyToHost(small, 0))
		} else {
			require.NoError(t, buf[0].CopyFromHost(0, small))
		}
		fmt.Printf("a synchronous copy of 4 KiB %s beside a kernel lingering %v (%v): %v\n", dir, linger, lingering, time.Since(began))
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
