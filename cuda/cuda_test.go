package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Environment of the IPC child: the test binary re-executes itself with
// these set, and TestMain runs ipcChild instead of the tests.
const (
	envIPCHandle = "GORING_CUDA_IPC_HANDLE"
	envIPCBytes  = "GORING_CUDA_IPC_BYTES"
	envIPCDevice = "GORING_CUDA_IPC_DEVICE"
	envIPCSeed   = "GORING_CUDA_IPC_SEED"
	// envBench enables TestBandwidth (it takes a few seconds of GPU time).
	envBench = "GORING_CUDA_BENCH"
)

func TestMain(m *testing.M) {
	if os.Getenv(envIPCHandle) != "" {
		if err := ipcChild(); err != nil {
			fmt.Fprintln(os.Stderr, "ipc child:", err)
			os.Exit(1)
		}
		fmt.Println("ipc child: ok")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// pattern fills b with bytes that differ with the offset and the seed, so
// a copy to the wrong place or of the wrong length shows.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ byte(i>>8) ^ seed
	}
	return b
}

// devices opens the first n GPUs, or skips the test with the reason when
// there is no driver or too few GPUs. A driver that is present and fails
// fails the test.
func devices(t *testing.T, n int) []*Device {
	t.Helper()
	count, err := DeviceCount()
	if IsNoDriver(err) {
		t.Skipf("skipping GPU test: %v", err)
	}
	require.NoError(t, err, "driver present but broken")
	if count < n {
		t.Skipf("skipping: needs %d GPUs, the driver shows %d", n, count)
	}
	ds := make([]*Device, n)
	for i := range ds {
		ds[i], err = Open(i)
		require.NoError(t, err)
		d := ds[i]
		t.Cleanup(func() { assert.NoError(t, d.Close()) })
	}
	return ds
}

// enablePeers turns on peer access both ways, or skips if the GPUs cannot
// reach each other directly.
func enablePeers(t *testing.T, a, b *Device) {
	t.Helper()
	ok, err := a.CanAccessPeer(b)
	require.NoError(t, err)
	if !ok {
		t.Skipf("skipping: GPU %d cannot access GPU %d directly", a.Ordinal(), b.Ordinal())
	}
	require.NoError(t, a.EnablePeerAccess(b))
	require.NoError(t, b.EnablePeerAccess(a))
	require.NoError(t, a.EnablePeerAccess(b), "enabling twice is not an error")
}

// --- tests that run everywhere -------------------------------------------

func TestLoadMissingLibrary(t *testing.T) {
	err := loadLib("/nonexistent/libcuda.so.1")
	require.Error(t, err)
	var nd *NoDriverError
	require.ErrorAs(t, err, &nd)
	assert.True(t, IsNoDriver(err))
	assert.Contains(t, err.Error(), "no CUDA driver: /nonexistent/libcuda.so.1")
	assert.Contains(t, err.Error(), LibEnv)
}

func TestLibPathEnv(t *testing.T) {
	t.Setenv(LibEnv, "")
	assert.Equal(t, LibName, libPath())
	t.Setenv(LibEnv, "/opt/x/libcuda.so.1")
	assert.Equal(t, "/opt/x/libcuda.so.1", libPath())
}

func TestResultError(t *testing.T) {
	err := check("cuMemAlloc", 2)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrOutOfMemory))
	assert.Contains(t, err.Error(), "cuda: cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY")
	assert.NoError(t, check("cuInit", 0))
	if !loaded.Load() {
		assert.Equal(t, "CUresult(12345)", Result(12345).Error())
	}
}

func TestCheckRange(t *testing.T) {
	cases := []struct {
		off, n, size int
		ok           bool
	}{
		{0, 0, 0, true},                    // 0
		{0, 10, 10, true},                  // 1
		{10, 0, 10, true},                  // 2
		{3, 7, 10, true},                   // 3
		{3, 8, 10, false},                  // 4
		{11, 0, 10, false},                 // 5
		{-1, 1, 10, false},                 // 6
		{0, -1, 10, false},                 // 7
		{1, int(^uint(0) >> 1), 10, false}, // 8: overflow of off+n
	}
	for i, c := range cases {
		err := checkRange("x", c.off, c.n, c.size)
		if c.ok {
			assert.NoError(t, err, "case %d", i)
		} else {
			assert.ErrorIs(t, err, ErrOutOfRange, "case %d", i)
		}
	}
}

func TestIPCHandleString(t *testing.T) {
	var h IPCHandle
	copy(h[:], pattern(64, 3))
	g, err := ParseIPCHandle(h.String())
	require.NoError(t, err)
	assert.Equal(t, h, g)
	_, err = ParseIPCHandle("abcd")
	assert.Error(t, err)
	_, err = ParseIPCHandle("zz")
	assert.Error(t, err)
}

// --- tests that need a GPU ------------------------------------------------

func TestDevices(t *testing.T) {
	devices(t, 1)
	n, err := DeviceCount()
	require.NoError(t, err)
	v, err := DriverVersion()
	require.NoError(t, err)
	t.Logf("driver CUDA version %d, %d devices", v, n)
	for i := 0; i < n; i++ {
		d, err := Open(i)
		require.NoError(t, err)
		name, err := d.Name()
		require.NoError(t, err)
		assert.NotEmpty(t, name)
		bus, err := d.PCIBusID()
		require.NoError(t, err)
		assert.Regexp(t, `^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$`, bus)
		mem, err := d.TotalMemoryBytes()
		require.NoError(t, err)
		assert.Greater(t, mem, int64(1<<30))
		free, err := d.FreeMemoryBytes()
		require.NoError(t, err)
		assert.LessOrEqual(t, free, mem)
		sms, err := d.SMCount()
		require.NoError(t, err)
		assert.Greater(t, sms, 0)
		ce, err := d.AsyncEngineCount()
		require.NoError(t, err)
		ua, err := d.UnifiedAddressing()
		require.NoError(t, err)
		assert.True(t, ua, "64-bit Linux GPUs use unified addressing")
		ma, mi, err := d.ComputeCapability()
		require.NoError(t, err)
		t.Logf("GPU %d: %s, PCI %s, %.1f GiB, %d SMs, sm_%d%d, %d copy engines, unified addressing %v",
			i, name, bus, float64(mem)/(1<<30), sms, ma, mi, ce, ua)
		for j := 0; j < n; j++ {
			if j == i {
				continue
			}
			p, err := Open(j)
			require.NoError(t, err)
			ok, err := d.CanAccessPeer(p)
			require.NoError(t, err)
			t.Logf("GPU %d -> GPU %d peer access: %v", i, j, ok)
			require.NoError(t, p.Close())
		}
		require.NoError(t, d.Close())
	}
}

func TestRoundTripOneDevice(t *testing.T) {
	d := devices(t, 1)[0]
	const size = 3<<20 + 17 // odd length: no alignment luck
	want := pattern(size, 0x5a)
	a, err := d.Alloc(size)
	require.NoError(t, err)
	defer func() { require.NoError(t, a.Free()) }()
	b, err := d.Alloc(size)
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Free()) }()

	// memset, then read back
	require.NoError(t, a.Memset(0, size, 0xab))
	got := make([]byte, size)
	require.NoError(t, a.CopyToHost(got, 0))
	assert.Equal(t, bytes.Repeat([]byte{0xab}, size), got)

	// host -> a -> b (DtoD) -> host, with offsets
	require.NoError(t, a.CopyFromHost(0, want))
	require.NoError(t, b.Memset(0, size, 0))
	require.NoError(t, Copy(b, 5, a, 1, size-9))
	require.NoError(t, b.CopyToHost(got, 0))
	exp := make([]byte, size)
	copy(exp[5:], want[1:size-8])
	require.True(t, bytes.Equal(exp, got), "DtoD copy with offsets")

	// async through pinned host memory on a stream
	s, err := d.NewStream()
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Destroy()) }()
	h, err := d.AllocHost(size)
	require.NoError(t, err)
	defer func() { require.NoError(t, h.Free()) }()
	copy(h.Bytes(), want)
	require.NoError(t, b.MemsetAsync(s, 0, size, 0x11))
	require.NoError(t, CopyHtoDAsync(s, b, 0, h, 0, size))
	require.NoError(t, CopyAsync(s, a, 0, b, 0, size))
	require.NoError(t, s.Synchronize())
	clear(h.Bytes())
	require.NoError(t, CopyDtoHAsync(s, h, 0, a, 0, size))
	require.NoError(t, s.Synchronize())
	done, err := s.Done()
	require.NoError(t, err)
	assert.True(t, done)
	require.True(t, bytes.Equal(want, h.Bytes()), "host -> device -> device -> host through pinned memory")
}

func TestRoundTripPeer(t *testing.T) {
	ds := devices(t, 2)
	d0, d1 := ds[0], ds[1]
	enablePeers(t, d0, d1)
	const size = 16<<20 + 4093
	want := pattern(size, 0xc3)
	a, err := d0.Alloc(size)
	require.NoError(t, err)
	defer func() { require.NoError(t, a.Free()) }()
	b, err := d1.Alloc(size)
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Free()) }()
	got := make([]byte, size)

	// synchronous: host -> GPU0 -> GPU1 -> host
	require.NoError(t, a.CopyFromHost(0, want))
	require.NoError(t, b.Memset(0, size, 0))
	require.NoError(t, Copy(b, 0, a, 0, size))
	require.NoError(t, b.CopyToHost(got, 0))
	require.True(t, bytes.Equal(want, got), "sync peer copy GPU0 -> GPU1")

	// async both ways, on either side's stream, with offsets
	s0, err := d0.NewStream()
	require.NoError(t, err)
	defer func() { require.NoError(t, s0.Destroy()) }()
	s1, err := d1.NewStream()
	require.NoError(t, err)
	defer func() { require.NoError(t, s1.Destroy()) }()
	require.NoError(t, a.Memset(0, size, 0))
	require.NoError(t, CopyAsync(s1, a, 3, b, 0, size-3)) // pull by GPU 1's stream... into GPU 0
	require.NoError(t, s1.Synchronize())
	require.NoError(t, a.CopyToHost(got, 0))
	require.True(t, bytes.Equal(want[:size-3], got[3:]), "async peer copy GPU1 -> GPU0 on GPU 1's stream")
	require.NoError(t, b.Memset(0, size, 0))
	require.NoError(t, CopyAsync(s0, b, 0, a, 3, size-3)) // GPU 0's stream pushes to GPU 1
	require.NoError(t, s0.Synchronize())
	require.NoError(t, b.CopyToHost(got, 0))
	require.True(t, bytes.Equal(want[:size-3], got[:size-3]), "async peer copy GPU0 -> GPU1 on GPU 0's stream")

	// cross-device ordering: GPU 1's stream waits for an event of GPU 0
	e, err := d0.NewEvent(false)
	require.NoError(t, err)
	defer func() { require.NoError(t, e.Destroy()) }()
	require.NoError(t, a.MemsetAsync(s0, 0, size, 0x77))
	require.NoError(t, e.Record(s0))
	require.NoError(t, s1.WaitEvent(e))
	require.NoError(t, CopyAsync(s1, b, 0, a, 0, size))
	require.NoError(t, s1.Synchronize())
	require.NoError(t, b.CopyToHost(got, 0))
	require.True(t, bytes.Equal(bytes.Repeat([]byte{0x77}, size), got), "stream wait on another GPU's event")
}

func TestEventTiming(t *testing.T) {
	d := devices(t, 1)[0]
	const size = 512 << 20
	a, err := d.Alloc(size)
	require.NoError(t, err)
	defer func() { require.NoError(t, a.Free()) }()
	b, err := d.Alloc(size)
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Free()) }()
	s, err := d.NewStream()
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Destroy()) }()
	start, err := d.NewEvent(true)
	require.NoError(t, err)
	end, err := d.NewEvent(true)
	require.NoError(t, err)
	nt, err := d.NewEvent(false)
	require.NoError(t, err)

	wall := time.Now()
	require.NoError(t, start.Record(s))
	for i := 0; i < 10; i++ {
		require.NoError(t, CopyAsync(s, b, 0, a, 0, size))
	}
	require.NoError(t, end.Record(s))
	require.NoError(t, nt.Record(s))
	require.NoError(t, end.Synchronize())
	wallDur := time.Since(wall)
	done, err := end.Done()
	require.NoError(t, err)
	assert.True(t, done)
	gpu, err := Elapsed(start, end)
	require.NoError(t, err)
	// 10 x 512 MiB read+written: at most a few TB/s, so at least ~2 ms
	assert.Greater(t, gpu, time.Millisecond)
	assert.LessOrEqual(t, gpu, wallDur+time.Millisecond)
	t.Logf("10 DtoD copies of 512 MiB: GPU %v (%.0f GB/s copied), wall %v", gpu, 10*size/gpu.Seconds()/1e9, wallDur)
	_, err = Elapsed(start, nt)
	assert.Error(t, err, "non-timing event")
	for _, e := range []*Event{start, end, nt} {
		require.NoError(t, e.Destroy())
	}
	assert.ErrorIs(t, start.Record(s), ErrFreed)
}

func TestBadArguments(t *testing.T) {
	ds := devices(t, 1)
	d := ds[0]
	n, err := DeviceCount()
	require.NoError(t, err)
	_, err = Open(-1)
	assert.ErrorIs(t, err, ErrInvalidDevice)
	_, err = Open(n)
	assert.ErrorIs(t, err, ErrInvalidDevice)
	assert.Contains(t, err.Error(), fmt.Sprintf("device %d out of range", n))

	_, err = d.Alloc(0)
	assert.ErrorIs(t, err, ErrZeroLength)
	_, err = d.Alloc(-5)
	assert.ErrorIs(t, err, ErrZeroLength)
	_, err = d.AllocHost(0)
	assert.ErrorIs(t, err, ErrZeroLength)
	_, err = d.Alloc(1 << 50) // 1 PiB: the driver says out of memory
	assert.ErrorIs(t, err, ErrOutOfMemory)
	assert.Contains(t, err.Error(), "CUDA_ERROR_OUT_OF_MEMORY")

	a, err := d.Alloc(4096)
	require.NoError(t, err)
	b, err := d.Alloc(4096)
	require.NoError(t, err)
	buf := make([]byte, 4097)
	assert.ErrorIs(t, a.CopyFromHost(0, buf), ErrOutOfRange)
	assert.ErrorIs(t, a.CopyToHost(buf[:10], 4090), ErrOutOfRange)
	assert.ErrorIs(t, a.Memset(-1, 2, 0), ErrOutOfRange)
	assert.ErrorIs(t, Copy(b, 1, a, 0, 4096), ErrOutOfRange)
	assert.NoError(t, Copy(b, 0, a, 0, 0), "zero-byte copy is a no-op")
	s, err := d.NewStream()
	require.NoError(t, err)
	h, err := d.AllocHost(100)
	require.NoError(t, err)
	assert.ErrorIs(t, CopyHtoDAsync(s, a, 0, h, 50, 51), ErrOutOfRange)
	assert.ErrorIs(t, CopyDtoHAsync(s, h, 0, a, 0, 101), ErrOutOfRange)

	// freed buffer
	require.NoError(t, b.Free())
	assert.ErrorIs(t, b.Free(), ErrFreed)
	assert.ErrorIs(t, b.CopyFromHost(0, buf[:1]), ErrFreed)
	assert.ErrorIs(t, Copy(a, 0, b, 0, 1), ErrFreed)
	assert.ErrorIs(t, CopyAsync(s, b, 0, a, 0, 1), ErrFreed)
	_, err = b.IPCHandle()
	assert.ErrorIs(t, err, ErrFreed)
	require.NoError(t, h.Free())
	assert.ErrorIs(t, CopyHtoDAsync(s, a, 0, h, 0, 1), ErrFreed)
	assert.Nil(t, h.Bytes())

	// the driver's own check: an IPC handle of garbage
	var junk IPCHandle
	copy(junk[:], pattern(64, 9))
	_, err = d.OpenIPC(junk, 4096)
	assert.Error(t, err)
	var r Result
	assert.True(t, errors.As(err, &r), "driver error is a Result: %v", err)

	require.NoError(t, s.Destroy())
	assert.ErrorIs(t, s.Synchronize(), ErrFreed)
	require.NoError(t, a.Free())

	// stream of another device
	if n >= 2 {
		d1, err := Open(1)
		require.NoError(t, err)
		defer func() { require.NoError(t, d1.Close()) }()
		s1, err := d1.NewStream()
		require.NoError(t, err)
		c, err := d.Alloc(64)
		require.NoError(t, err)
		assert.ErrorIs(t, c.MemsetAsync(s1, 0, 64, 1), ErrDeviceMismatch)
		require.NoError(t, c.Free())
		require.NoError(t, s1.Destroy())
	}

	// closed device
	d2, err := Open(0)
	require.NoError(t, err)
	require.NoError(t, d2.Close())
	_, err = d2.Alloc(64)
	assert.ErrorIs(t, err, ErrFreed)
}

// TestIPC exports a buffer on GPU 0 and has a second process (this test
// binary, re-executed) map it on each GPU, check the bytes this process
// wrote and write its own answer into the last page.
func TestIPC(t *testing.T) {
	ds := devices(t, 1)
	n, err := DeviceCount()
	require.NoError(t, err)
	const size = 4<<20 + 12345
	const seed = 0x3c
	a, err := ds[0].Alloc(size)
	require.NoError(t, err)
	defer func() { require.NoError(t, a.Free()) }()
	h, err := a.IPCHandle()
	require.NoError(t, err)
	for dev := 0; dev < n && dev < 2; dev++ {
		require.NoError(t, a.CopyFromHost(0, pattern(size, seed)))
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(),
			envIPCHandle+"="+h.String(),
			envIPCBytes+"="+strconv.Itoa(size),
			envIPCDevice+"="+strconv.Itoa(dev),
			envIPCSeed+"="+strconv.Itoa(seed))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "child on GPU %d: %s", dev, out)
		assert.Contains(t, string(out), "ipc child: ok")
		got := make([]byte, size)
		require.NoError(t, a.CopyToHost(got, 0))
		want := pattern(size, seed)
		copy(want[size-4096:], pattern(4096, ^byte(seed)))
		require.True(t, bytes.Equal(want, got), "bytes written by the child on GPU %d", dev)
		t.Logf("IPC: child process mapped GPU 0's buffer on GPU %d, read %d bytes and wrote 4096", dev, size)
	}
}

// ipcChild runs in the re-executed test binary.
func ipcChild() error {
	h, err := ParseIPCHandle(os.Getenv(envIPCHandle))
	if err != nil {
		return err
	}
	size, err := strconv.Atoi(os.Getenv(envIPCBytes))
	if err != nil {
		return err
	}
	dev, err := strconv.Atoi(os.Getenv(envIPCDevice))
	if err != nil {
		return err
	}
	seed, err := strconv.Atoi(os.Getenv(envIPCSeed))
	if err != nil {
		return err
	}
	d, err := Open(dev)
	if err != nil {
		return err
	}
	defer d.Close()
	b, err := d.OpenIPC(h, size)
	if err != nil {
		return err
	}
	got := make([]byte, size)
	if err := b.CopyToHost(got, 0); err != nil {
		return err
	}
	if !bytes.Equal(got, pattern(size, byte(seed))) {
		return fmt.Errorf("mapped buffer does not hold the parent's bytes")
	}
	if err := b.CopyFromHost(size-4096, pattern(4096, ^byte(seed))); err != nil {
		return err
	}
	if err := d.Synchronize(); err != nil {
		return err
	}
	return b.Free()
}

// Memory from the stream-ordered pool holds bytes like any other, and a
// legacy IPC handle does not export it: the driver refuses, which is how
// goring's IPC paths learn to fall back (the team layer's shared-GPU
// leader, the push engine).
func TestAllocPooled(t *testing.T) {
	ds := devices(t, 1)
	const size = 1<<20 + 77
	b, err := ds[0].AllocPooled(size)
	if err != nil && strings.Contains(err.Error(), "NOT_SUPPORTED") {
		t.Skipf("no stream-ordered pool: %v", err)
	}
	require.NoError(t, err)
	require.NoError(t, b.CopyFromHost(0, pattern(size, 0x5a)))
	got := make([]byte, size)
	require.NoError(t, b.CopyToHost(got, 0))
	assert.True(t, bytes.Equal(pattern(size, 0x5a), got))
	a, err := ds[0].AllocationOf(b.Ptr())
	require.NoError(t, err)
	_, err = ds[0].ExportAllocation(a)
	require.Error(t, err, "a pool's memory has no legacy IPC handle")
	t.Logf("pooled memory: %v", err)
	require.NoError(t, b.Free())
	assert.ErrorIs(t, b.Free(), ErrFreed)
	_, err = ds[0].AllocPooled(0)
	assert.ErrorIs(t, err, ErrZeroLength)
}
