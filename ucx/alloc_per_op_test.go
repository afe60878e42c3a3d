package ucx

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// A send and a receive of a message in memory outside the Go heap cost one
// allocation each: the Request the caller gets. Posting names the request
// to C through the worker's slot table and reads the UCX request from a
// slot the worker keeps (worker.go), so a collective's small messages make
// no other garbage; a runtime/cgo.Handle per operation and a local
// variable handed to C cost four more.
func TestSendRecvAllocatesOnlyTheRequests(t *testing.T) {
	p := newPair(t, Options{}, EndpointOptions{})
	src, dst := Alloc(64), Alloc(64)
	defer Free(src)
	defer Free(dst)
	tag, err := MakeTag(0, 1, 2)
	require.NoError(t, err)
	var nop Callback = func(Completion) {}
	one := func() {
		r, err := p.b.TagRecvAddr(uintptr(unsafe.Pointer(&dst[0])), len(dst), MemHost, tag, MaskFull, nop)
		require.NoError(t, err)
		s, err := p.ab.TagSendAddr(uintptr(unsafe.Pointer(&src[0])), len(src), MemHost, tag, nop)
		require.NoError(t, err)
		for !r.Done() || !s.Done() { // not progressUntil: its variadic slice is garbage of its own
			p.a.Progress()
			p.b.Progress()
		}
	}
	for i := 0; i < 50; i++ {
		one() // warm the maps, slot tables and event batches
	}
	require.LessOrEqual(t, testing.AllocsPerRun(200, one), 2.0)
}

// The same with Go-heap buffers, which the package pins while UCX holds
// them: the pins cost nothing more once the worker's pinners are warm (a
// runtime.Pinner per request would set a finalizer per operation, the
// most expensive step of a small post in a profile of the team layer).
func TestSendRecvOfGoMemoryAllocatesOnlyTheRequests(t *testing.T) {
	p := newPair(t, Options{}, EndpointOptions{})
	src, dst := make([]byte, 64), make([]byte, 64)
	tag, err := MakeTag(0, 1, 2)
	require.NoError(t, err)
	var nop Callback = func(Completion) {}
	one := func() {
		r, err := p.b.TagRecv(dst, tag, MaskFull, nop)
		require.NoError(t, err)
		s, err := p.ab.TagSend(src, tag, nop)
		require.NoError(t, err)
		for !r.Done() || !s.Done() {
			p.a.Progress()
			p.b.Progress()
		}
	}
	for i := 0; i < 50; i++ {
		one()
	}
	require.LessOrEqual(t, testing.AllocsPerRun(200, one), 2.0)
}
