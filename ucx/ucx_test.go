package ucx

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests use UCX's defaults (self, sm and tcp here). To run them over
// a chosen set of transports, set UCX_TLS before `go test`, e.g.
// UCX_TLS=tcp or UCX_TLS=self,sm,tcp in a container without /dev/shm room.

func TestMain(m *testing.M) {
	// UCX warns about UCX_* variables it does not use; tests may set some.
	if os.Getenv("UCX_WARN_UNUSED_ENV_VARS") == "" {
		os.Setenv("UCX_WARN_UNUSED_ENV_VARS", "n")
	}
	os.Exit(m.Run())
}

func skipWithoutUCX(t *testing.T) {
	t.Helper()
	if err := Load(); err != nil {
		t.Skipf("libucp cannot be loaded, UCX tests skipped: %v", err)
	}
}

// pair is two workers of one context with an endpoint from a to b and
// one from b to a, as two ranks of a job would have.
type pair struct {
	ctx    *Context
	a, b   *Worker
	ab, ba *Endpoint
}

func newPair(t *testing.T, opts Options, eopts EndpointOptions) *pair {
	t.Helper()
	skipWithoutUCX(t)
	ctx, err := Init(opts)
	require.NoError(t, err)
	p := &pair{ctx: ctx}
	p.a, err = ctx.NewWorker(WorkerOptions{})
	require.NoError(t, err)
	p.b, err = ctx.NewWorker(WorkerOptions{})
	require.NoError(t, err)
	addrA, err := p.a.Address()
	require.NoError(t, err)
	addrB, err := p.b.Address()
	require.NoError(t, err)
	require.NotEmpty(t, addrA)
	p.ab, err = p.a.Connect(addrB, eopts)
	require.NoError(t, err)
	p.ba, err = p.b.Connect(addrA, eopts)
	require.NoError(t, err)
	t.Cleanup(func() { p.close(t) })
	return p
}

// close shuts the endpoints with a flush, progressing both sides as two
// processes would, then the workers and the context.
func (p *pair) close(t *testing.T) {
	var reqs []*Request
	for _, ep := range []*Endpoint{p.ab, p.ba} {
		if ep.ep != nil {
			r, err := ep.CloseNB(false, nil)
			require.NoError(t, err)
			reqs = append(reqs, r)
		}
	}
	p.progressUntil(t, 10*time.Second, reqs...)
	for _, r := range reqs {
		assert.NoError(t, r.Err(), "endpoint close")
	}
	assert.NoError(t, p.a.Close())
	assert.NoError(t, p.b.Close())
	assert.NoError(t, p.ctx.Close())
}

// progressUntil progresses both workers until every request is done.
func (p *pair) progressUntil(t *testing.T, timeout time.Duration, reqs ...*Request) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		all := true
		for _, r := range reqs {
			all = all && r.Done()
		}
		if all {
			return
		}
		require.True(t, time.Now().Before(deadline), "requests not done after %v", timeout)
		p.a.Progress()
		p.b.Progress()
	}
}

func fillPattern(b []byte, seed int) {
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
}

func TestMemoryTypesIncludeHost(t *testing.T) {
	skipWithoutUCX(t)
	ctx, err := Init(Options{})
	require.NoError(t, err)
	defer ctx.Close()
	mt, err := ctx.MemoryTypes()
	require.NoError(t, err)
	assert.True(t, mt.Has(MemHost), "memory types %s (%#x) lack host", mt, uint64(mt))
	assert.Contains(t, mt.String(), "host")
	t.Logf("UCX %s, memory types: %s", VersionString(), mt)
}

func TestMemoryTypeNames(t *testing.T) {
	s := MemoryTypes(1<<MemHost | 1<<MemCUDA | 1<<MemCUDAManaged | 1<<MemROCm | 1<<20)
	assert.Equal(t, "host,cuda,cuda-managed,rocm,mem(20)", s.String())
	assert.True(t, s.Has(MemCUDA))
	assert.False(t, s.Has(MemROCmManaged))
	assert.False(t, s.Has(MemUnknown))
}

func TestInitBadConfig(t *testing.T) {
	skipWithoutUCX(t)
	_, err := Init(Options{Config: map[string]string{"RNDV_THRESH": "lots"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `UCX_RNDV_THRESH="lots"`)
}

// endpointModes are the two ways the runtime may connect ranks: with
// UCX's peer error mode (TCP only on one host with UCX 1.13) and without
// (shared memory).
var endpointModes = []struct {
	name string
	opts EndpointOptions
}{
	{"peer_errors", EndpointOptions{}},
	{"no_peer_errors", EndpointOptions{NoPeerErrors: true}},
}

func TestTagSendRecvSizes(t *testing.T) {
	for _, mode := range endpointModes {
		t.Run(mode.name, func(t *testing.T) { testTagSendRecvSizes(t, mode.opts) })
	}
}

func testTagSendRecvSizes(t *testing.T, eopts EndpointOptions) {
	p := newPair(t, Options{}, eopts)
	sizes := []int{0, 1, 4 << 10, 4<<10 + 3, 1 << 20, 64 << 20}
	for i, n := range sizes {
		for _, mem := range []string{"goheap", "alloc"} {
			t.Run(fmt.Sprintf("%d_%d_%s", i, n, mem), func(t *testing.T) {
				var src, dst []byte
				if mem == "alloc" {
					src, dst = Alloc(n), Alloc(n+16)
					defer Free(src)
					defer Free(dst)
				} else {
					src, dst = make([]byte, n), make([]byte, n+16)
				}
				fillPattern(src, i)
				for j := range dst {
					dst[j] = 0xEE
				}
				tag, err := MakeTag(1, i, 7)
				require.NoError(t, err)
				var rc, sc []Completion
				rr, err := p.b.TagRecv(dst, tag, MaskFull, func(c Completion) { rc = append(rc, c) })
				require.NoError(t, err)
				sr, err := p.ab.TagSend(src, tag, func(c Completion) { sc = append(sc, c) })
				require.NoError(t, err)
				start := time.Now()
				p.progressUntil(t, 30*time.Second, rr, sr)
				if n >= 1<<20 {
					el := time.Since(start)
					t.Logf("%d bytes in %v: %.2f GB/s", n, el, float64(n)/el.Seconds()/1e9)
				}
				require.Len(t, rc, 1, "receive callback runs once")
				require.Len(t, sc, 1, "send callback runs once")
				require.NoError(t, rc[0].Err)
				require.NoError(t, sc[0].Err)
				assert.Equal(t, n, rc[0].Length)
				assert.Equal(t, tag, rc[0].Tag)
				assert.Equal(t, rc[0], rr.Completion())
				require.True(t, bytesEqual(src, dst[:n]), "received bytes differ")
				for j := n; j < len(dst); j++ {
					require.Equal(t, byte(0xEE), dst[j], "byte %d past the message was written", j)
				}
				assert.Zero(t, p.a.Pending()+p.b.Pending())
			})
		}
	}
}

func bytesEqual(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestUnexpectedMessages(t *testing.T) {
	p := newPair(t, Options{}, EndpointOptions{})
	for i, n := range []int{64, 1 << 20} {
		src := make([]byte, n)
		fillPattern(src, 100+i)
		tag, _ := MakeTag(0, 3, i)
		sr, err := p.ab.TagSend(src, tag, nil)
		require.NoError(t, err)
		// Let the message (or its rendezvous header) reach b before any
		// receive exists.
		for k := 0; k < 200; k++ {
			p.a.Progress()
			p.b.Progress()
		}
		dst := make([]byte, n)
		rr, err := p.b.TagRecv(dst, tag, MaskFull, nil)
		require.NoError(t, err)
		p.progressUntil(t, 10*time.Second, sr, rr)
		require.NoError(t, rr.Err(), "case %d", i)
		require.NoError(t, sr.Err(), "case %d", i)
		assert.Equal(t, n, rr.Completion().Length, "case %d", i)
		assert.True(t, bytesEqual(src, dst), "case %d content", i)
	}
}

func TestTagMatchingOrderAndAnySender(t *testing.T) {
	p := newPair(t, Options{}, EndpointOptions{})
	// Three messages with the same tag match receives in posting order;
	// one with another step waits for its own receive.
	same, _ := MakeTag(5, 1, 1)
	other, _ := MakeTag(5, 1, 2)
	var sends []*Request
	for k, tag := range []Tag{same, other, same, same} {
		r, err := p.ab.TagSend([]byte{byte(k)}, tag, nil)
		require.NoError(t, err)
		sends = append(sends, r)
	}
	var got []byte
	var recvs []*Request
	for k := 0; k < 3; k++ {
		buf := make([]byte, 1)
		want, _ := MakeTag(0, 1, 1)
		r, err := p.b.TagRecv(buf, want, MaskAnySender, func(c Completion) {
			require.NoError(t, c.Err)
			assert.Equal(t, 5, c.Tag.Sender(), "sender read from the matched tag")
			got = append(got, buf[0])
		})
		require.NoError(t, err)
		recvs = append(recvs, r)
	}
	p.progressUntil(t, 10*time.Second, recvs...)
	assert.Equal(t, []byte{0, 2, 3}, got)
	buf := make([]byte, 1)
	r, err := p.b.TagRecv(buf, other, MaskFull, nil)
	require.NoError(t, err)
	p.progressUntil(t, 10*time.Second, append(sends, r)...)
	assert.Equal(t, byte(1), buf[0])
}

func TestTruncation(t *testing.T) {
	p := newPair(t, Options{}, EndpointOptions{})
	for i, unexpected := range []bool{false, true} {
		src := make([]byte, 1000)
		fillPattern(src, i)
		tag, _ := MakeTag(0, 9, i)
		dst := make([]byte, 100)
		var rr, sr *Request
		var err error
		if !unexpected {
			rr, err = p.b.TagRecv(dst, tag, MaskFull, nil)
			require.NoError(t, err)
		}
		sr, err = p.ab.TagSend(src, tag, nil)
		require.NoError(t, err)
		if unexpected {
			for k := 0; k < 200; k++ {
				p.a.Progress()
				p.b.Progress()
			}
			rr, err = p.b.TagRecv(dst, tag, MaskFull, nil)
			require.NoError(t, err)
		}
		p.progressUntil(t, 10*time.Second, rr, sr)
		assert.True(t, errors.Is(rr.Err(), ErrMessageTruncated), "case %d: got %v", i, rr.Err())
	}
}

func TestCancelPendingRecv(t *testing.T) {
	p := newPair(t, Options{}, EndpointOptions{})
	tag, _ := MakeTag(0, 0, 99)
	calls := 0
	var got Completion
	r, err := p.b.TagRecv(make([]byte, 64), tag, MaskFull, func(c Completion) { calls++; got = c })
	require.NoError(t, err)
	for k := 0; k < 50; k++ {
		p.b.Progress()
	}
	done, err := r.Test()
	require.NoError(t, err)
	require.False(t, done, "nothing was sent, the receive must be pending")
	r.Cancel()
	p.progressUntil(t, 5*time.Second, r)
	assert.Equal(t, 1, calls)
	assert.True(t, errors.Is(got.Err, ErrCanceled), "got %v", got.Err)
	r.Cancel() // after delivery: no effect, no crash
	p.b.Progress()
	assert.Equal(t, 1, calls)
	assert.Zero(t, p.b.Pending())

	// The canceled receive no longer matches: a later message goes to the
	// next receive.
	dst := make([]byte, 3)
	r2, err := p.b.TagRecv(dst, tag, MaskFull, nil)
	require.NoError(t, err)
	s2, err := p.ab.TagSend([]byte("abc"), tag, nil)
	require.NoError(t, err)
	p.progressUntil(t, 5*time.Second, r2, s2)
	assert.Equal(t, "abc", string(dst))
}

func threadCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func processCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// An idle Wait sleeps in poll on the event fd instead of spinning.
func TestWaitIdleDoesNotSpin(t *testing.T) {
	for _, mode := range endpointModes {
		t.Run(mode.name, func(t *testing.T) { testWaitIdleDoesNotSpin(t, mode.opts) })
	}
}

func testWaitIdleDoesNotSpin(t *testing.T, eopts EndpointOptions) {
	p := newPair(t, Options{}, eopts)
	// Wire the endpoints up first: an idle rank has exchanged messages
	// before it waits.
	tag0, _ := MakeTag(0, 0, 0)
	r0, err := p.b.TagRecv(make([]byte, 1), tag0, MaskFull, nil)
	require.NoError(t, err)
	s0, err := p.ab.TagSend([]byte{1}, tag0, nil)
	require.NoError(t, err)
	p.progressUntil(t, 5*time.Second, r0, s0)
	// A receive nobody sends to, as a rank waiting on a slow peer has.
	tag, _ := MakeTag(0, 0, 1)
	r, err := p.b.TagRecv(make([]byte, 8), tag, MaskFull, nil)
	require.NoError(t, err)

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	thr0, proc0, wall0 := threadCPU(t), processCPU(t), time.Now()
	n, err := p.b.Wait(time.Second)
	wall, thr, proc := time.Since(wall0), threadCPU(t)-thr0, processCPU(t)-proc0
	require.NoError(t, err)
	assert.Zero(t, n)
	t.Logf("idle Wait(1s): wall %v, waiting thread CPU %v, process CPU %v", wall, thr, proc)
	assert.GreaterOrEqual(t, wall, 950*time.Millisecond, "Wait returned before its timeout")
	assert.Less(t, wall, 3*time.Second)
	assert.Less(t, thr, 50*time.Millisecond, "the waiting thread spun")
	assert.Less(t, proc, 200*time.Millisecond, "the process spun while idle")
	r.Cancel()
	p.progressUntil(t, 5*time.Second, r)
}

func TestSignalWakesWait(t *testing.T) {
	p := newPair(t, Options{}, EndpointOptions{})
	go func() {
		time.Sleep(100 * time.Millisecond)
		assert.NoError(t, p.b.Signal())
	}()
	start := time.Now()
	n, err := p.b.Wait(10 * time.Second)
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Less(t, time.Since(start), 5*time.Second, "Signal did not wake Wait")
}

// Two ranks, one goroutine each, each driving its own worker with Wait
// only: the progress-loop shape the executor uses.
func TestPingPongOneGoroutinePerRank(t *testing.T) {
	for _, mode := range endpointModes {
		t.Run(mode.name, func(t *testing.T) { testPingPong(t, mode.opts) })
	}
}

func testPingPong(t *testing.T, eopts EndpointOptions) {
	p := newPair(t, Options{}, eopts)
	const rounds = 200
	const size = 256 << 10
	// The content is a fixed pattern with the round number stamped in, so
	// the timing measures communication, not pattern generation.
	pattern := make([]byte, size)
	fillPattern(pattern, 42)
	rank := func(w *Worker, ep *Endpoint, me int, errs chan<- error) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		buf := Alloc(size)
		defer Free(buf)
		in := Alloc(size)
		defer Free(in)
		for k := 0; k < rounds; k++ {
			if (k+me)%2 == 0 { // my turn to send
				stampRound(buf, pattern, k)
				tag, _ := MakeTag(me, k, 0)
				r, err := ep.TagSend(buf, tag, nil)
				if err == nil {
					err = w.WaitRequest(r, 10*time.Second)
				}
				if err != nil {
					errs <- fmt.Errorf("rank %d round %d send: %w", me, k, err)
					return
				}
			} else {
				tag, _ := MakeTag(1-me, k, 0)
				r, err := w.TagRecv(in, tag, MaskFull, nil)
				if err == nil {
					err = w.WaitRequest(r, 10*time.Second)
				}
				if err != nil {
					errs <- fmt.Errorf("rank %d round %d recv: %w", me, k, err)
					return
				}
				stampRound(buf, pattern, k)
				if !bytesEqual(buf, in) {
					errs <- fmt.Errorf("rank %d round %d: content differs", me, k)
					return
				}
			}
		}
		errs <- nil
	}
	errs := make(chan error, 2)
	start := time.Now()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); rank(p.a, p.ab, 0, errs) }()
	go func() { defer wg.Done(); rank(p.b, p.ba, 1, errs) }()
	wg.Wait()
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	el := time.Since(start)
	t.Logf("%d ping-pong rounds of %d KiB with Wait: %v (%.0f us/round)", rounds, size>>10, el, float64(el.Microseconds())/rounds)
}

func stampRound(dst, pattern []byte, k int) {
	copy(dst, pattern)
	for i := 0; i < 8 && i < len(dst); i++ {
		dst[i] ^= byte(k >> (8 * i))
	}
}

// Over TCP a dead peer closes the socket: the survivor's send fails with a
// status and its endpoint reports the failure; nothing crashes or hangs.
func TestDeadPeerYieldsError(t *testing.T) {
	skipWithoutUCX(t)
	ctx, err := Init(Options{Config: map[string]string{"TLS": "tcp"}})
	require.NoError(t, err)
	defer ctx.Close()
	a, err := ctx.NewWorker(WorkerOptions{})
	require.NoError(t, err)
	defer a.Close()
	b, err := ctx.NewWorker(WorkerOptions{})
	require.NoError(t, err)
	addrB, err := b.Address()
	require.NoError(t, err)
	var epErr error
	ep, err := a.Connect(addrB, EndpointOptions{OnError: func(err error) { epErr = err }})
	require.NoError(t, err)
	// Wire up the connection with one message.
	tag, _ := MakeTag(0, 0, 0)
	rr, err := b.TagRecv(make([]byte, 4), tag, MaskFull, nil)
	require.NoError(t, err)
	sr, err := ep.TagSend([]byte("ping"), tag, nil)
	require.NoError(t, err)
	deadline := time.Now().Add(10 * time.Second)
	for !(rr.Done() && sr.Done()) {
		require.True(t, time.Now().Before(deadline))
		a.Progress()
		b.Progress()
	}
	require.NoError(t, b.Close()) // the peer dies

	var last error
	deadline = time.Now().Add(30 * time.Second)
	for k := 0; last == nil && epErr == nil; k++ {
		require.True(t, time.Now().Before(deadline), "no error 30 s after the peer died")
		r, err := ep.TagSend(make([]byte, 64<<10), tag, nil)
		require.NoError(t, err, "posting never fails; the status arrives as a completion")
		for !r.Done() && epErr == nil && time.Now().Before(deadline) {
			a.Wait(100 * time.Millisecond)
		}
		last = r.Err()
	}
	t.Logf("send error %v, endpoint error %v", last, epErr)
	if last != nil {
		assert.True(t, IsPeerFailure(last) || errors.Is(last, ErrCanceled), "send error %v", last)
	}
	if epErr != nil {
		assert.True(t, IsPeerFailure(epErr), "endpoint error %v", epErr)
		assert.Equal(t, epErr, ep.Err())
	}
	assert.NoError(t, ep.Close(), "closing a failed endpoint")
}

func TestAllocFree(t *testing.T) {
	b := Alloc(3 << 20)
	require.Len(t, b, 3<<20)
	assert.Zero(t, b[0])
	assert.Zero(t, b[len(b)-1])
	b[len(b)-1] = 1
	require.NoError(t, Free(b))
	require.Len(t, Alloc(0), 0)
	require.NoError(t, Free(Alloc(0)))
}

func TestClosedWorkerErrors(t *testing.T) {
	skipWithoutUCX(t)
	ctx, err := Init(Options{})
	require.NoError(t, err)
	w, err := ctx.NewWorker(WorkerOptions{})
	require.NoError(t, err)
	require.Error(t, ctx.Close(), "context with an open worker")
	// A pending receive at Close is canceled and its callback runs.
	var got error
	r, err := w.TagRecv(make([]byte, 1), 1, MaskFull, func(c Completion) { got = c.Err })
	require.NoError(t, err)
	require.NoError(t, w.Close())
	assert.True(t, r.Done())
	assert.True(t, errors.Is(got, ErrCanceled), "got %v", got)
	_, err = w.TagRecv(make([]byte, 1), 1, MaskFull, nil)
	assert.Error(t, err)
	assert.Zero(t, w.Progress())
	require.NoError(t, ctx.Close())
}

// Callbacks may post the next operation (the executor's pattern), and a
// Progress made from inside a callback delivers nothing.
func TestCallbackPostsNext(t *testing.T) {
	p := newPair(t, Options{}, EndpointOptions{NoPeerErrors: true})
	const n = 20
	var got []int
	var last *Request
	buf := make([]byte, 4)
	var post func(k int)
	post = func(k int) {
		tag, _ := MakeTag(0, k, 0)
		r, err := p.b.TagRecv(buf, tag, MaskFull, func(c Completion) {
			require.NoError(t, c.Err)
			got = append(got, int(buf[0]))
			assert.Zero(t, p.b.Progress(), "nested Progress must not deliver")
			if k+1 < n {
				post(k + 1)
			}
		})
		require.NoError(t, err)
		last = r
	}
	post(0)
	var sends []*Request
	for k := n - 1; k >= 0; k-- { // sent in reverse: all but one arrive unexpected
		tag, _ := MakeTag(0, k, 0)
		r, err := p.ab.TagSend([]byte{byte(k), 0, 0, 0}, tag, nil)
		require.NoError(t, err)
		sends = append(sends, r)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < n {
		require.True(t, time.Now().Before(deadline), "got %v", got)
		p.a.Progress()
		p.b.Progress()
	}
	p.progressUntil(t, 5*time.Second, append(sends, last)...)
	want := make([]int, n)
	for k := range want {
		want[k] = k
	}
	assert.Equal(t, want, got)
}

func TestThreadSingleWorker(t *testing.T) {
	skipWithoutUCX(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ctx, err := Init(Options{})
	require.NoError(t, err)
	defer ctx.Close()
	a, err := ctx.NewWorker(WorkerOptions{ThreadMode: ThreadSingle})
	require.NoError(t, err)
	defer a.Close()
	addr, err := a.Address()
	require.NoError(t, err)
	ep, err := a.Connect(addr, EndpointOptions{}) // a worker may talk to itself
	require.NoError(t, err)
	dst := make([]byte, 5)
	r, err := a.TagRecv(dst, 3, MaskFull, nil)
	require.NoError(t, err)
	s, err := ep.TagSend([]byte("hello"), 3, nil)
	require.NoError(t, err)
	require.NoError(t, a.WaitRequest(r, 5*time.Second))
	require.NoError(t, a.WaitRequest(s, 5*time.Second))
	assert.Equal(t, "hello", string(dst))
	require.NoError(t, ep.Close())
	_, err = ctx.NewWorker(WorkerOptions{ThreadMode: ThreadMode(7)})
	assert.Error(t, err)
}

// SpinBeforeWait trades CPU for latency: the spin is visible as CPU time.
func TestSpinBeforeWait(t *testing.T) {
	skipWithoutUCX(t)
	ctx, err := Init(Options{})
	require.NoError(t, err)
	defer ctx.Close()
	w, err := ctx.NewWorker(WorkerOptions{SpinBeforeWait: 100 * time.Millisecond})
	require.NoError(t, err)
	defer w.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, w0 := threadCPU(t), time.Now()
	n, err := w.Wait(300 * time.Millisecond)
	require.NoError(t, err)
	assert.Zero(t, n)
	cpu, wall := threadCPU(t)-c0, time.Since(w0)
	t.Logf("Wait(300ms) with 100ms spin: wall %v, thread CPU %v", wall, cpu)
	assert.GreaterOrEqual(t, wall, 280*time.Millisecond)
	assert.Greater(t, cpu, 5*time.Millisecond, "no spin happened")
	assert.Less(t, cpu, 200*time.Millisecond, "spun past the spin budget")
}

// readable waits up to timeout for fd to become readable.
func readable(t *testing.T, fd int, timeout time.Duration) bool {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	require.NoError(t, err)
	defer syscall.Close(ep)
	require.NoError(t, syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}))
	ev := make([]syscall.EpollEvent, 1)
	for {
		n, err := syscall.EpollWait(ep, ev, int(timeout.Milliseconds()))
		if err == syscall.EINTR {
			continue
		}
		require.NoError(t, err)
		return n > 0
	}
}

// The documented external-loop protocol: progress, Arm, and poll the
// event fd only when Arm says nothing is pending.
func TestArmAndEventFD(t *testing.T) {
	p := newPair(t, Options{}, EndpointOptions{NoPeerErrors: true})
	efd := p.b.EventFD()
	require.GreaterOrEqual(t, efd, 0)
	tag, _ := MakeTag(0, 0, 5)
	dst := make([]byte, 3)
	r, err := p.b.TagRecv(dst, tag, MaskFull, nil)
	require.NoError(t, err)
	for {
		p.b.Progress()
		err := p.b.Arm()
		if err == nil {
			break
		}
		require.ErrorIs(t, err, ErrBusy)
	}
	assert.False(t, readable(t, efd, 50*time.Millisecond), "armed idle worker's fd is readable")
	s, err := p.ab.TagSend([]byte("xyz"), tag, nil)
	require.NoError(t, err)
	for k := 0; k < 100 && !s.Done(); k++ {
		p.a.Progress()
	}
	assert.True(t, readable(t, efd, 5*time.Second), "an arrival did not wake the fd")
	p.progressUntil(t, 5*time.Second, r, s)
	assert.Equal(t, "xyz", string(dst))
}

// BenchmarkTagSendRecv posts one receive and one send per iteration
// between two workers of one process and progresses both until they
// complete (one goroutine): per-operation cost of the binding plus UCX.
func BenchmarkTagSendRecv(b *testing.B) {
	for _, n := range []int{8, 64 << 10, 1 << 20} {
		for _, mode := range endpointModes {
			b.Run(fmt.Sprintf("%s/%d", mode.name, n), func(b *testing.B) {
				if err := Load(); err != nil {
					b.Skipf("libucp cannot be loaded: %v", err)
				}
				p := newPairB(b, mode.opts)
				src, dst := Alloc(n), Alloc(n)
				defer Free(src)
				defer Free(dst)
				b.SetBytes(int64(n))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					tag := Tag(i & MaxTagStep)
					r, err := p.b.TagRecv(dst, tag, MaskFull, nil)
					if err != nil {
						b.Fatal(err)
					}
					s, err := p.ab.TagSend(src, tag, nil)
					if err != nil {
						b.Fatal(err)
					}
					for !r.Done() || !s.Done() {
						p.a.Progress()
						p.b.Progress()
					}
					if r.Err() != nil {
						b.Fatal(r.Err())
					}
				}
			})
		}
	}
}

// newPairB is newPair for benchmarks: one-way endpoints a->b, closed by
// force at the end.
func newPairB(b *testing.B, eopts EndpointOptions) *pair {
	ctx, err := Init(Options{})
	if err != nil {
		b.Fatal(err)
	}
	p := &pair{ctx: ctx}
	if p.a, err = ctx.NewWorker(WorkerOptions{}); err != nil {
		b.Fatal(err)
	}
	if p.b, err = ctx.NewWorker(WorkerOptions{}); err != nil {
		b.Fatal(err)
	}
	addrB, err := p.b.Address()
	if err != nil {
		b.Fatal(err)
	}
	if p.ab, err = p.a.Connect(addrB, eopts); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		p.a.Close()
		p.b.Close()
		p.ctx.Close()
	})
	return p
}
