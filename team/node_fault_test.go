package team

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/devsync"
)

// Faults on the node kernels (docs/gpu.md "Device-driven node
// collectives"), one process per GPU: a rank killed while the others'
// kernels wait for it, and a rank that comes late. Each child runs one
// allreduce to set the team's node scratch up, then the call under test,
// whose runner must be the node kernels'.

// nodeGPUs is how many ranks the node tests run (2 to 4, a GPU each), or
// skips. With envOneGPURanks set (2 to devsync.MaxRanks), that many ranks
// share GPU 0 instead (nodeOnSharedGPU: the node path's protocol on a
// machine of one GPU; times mean nothing then).
func nodeGPUs(t *testing.T) int {
	if err := cuda.Load(); err != nil {
		t.Skipf("no CUDA driver: %v", err)
	}
	n, err := cuda.DeviceCount()
	if v := os.Getenv(envOneGPURanks); v != "" && err == nil && n >= 1 {
		k, err := strconv.Atoi(v)
		require.NoError(t, err, envOneGPURanks)
		require.True(t, k >= 2 && k <= devsync.MaxRanks, "%s=%d: 2 to %d", envOneGPURanks, k, devsync.MaxRanks)
		return k
	}
	if err != nil || n < 2 {
		t.Skipf("needs two GPUs or more (devices %d, %v)", n, err)
	}
	return min(n, 4)
}

// envOneGPURanks makes the node tests' ranks share GPU 0 (nodeGPUs).
const envOneGPURanks = "GORING_NODE_RANKS_ON_ONE_GPU"

// nodeGPUOf is the GPU the node tests' rank runs on: its own, or GPU 0
// where the ranks share it (envOneGPURanks).
func nodeGPUOf(rank int) int {
	if nodeOnSharedGPU {
		return 0
	}
	return rank
}

// openNodeGPU opens the node test rank's GPU (nodeGPUOf), current on this
// goroutine's thread, to which the goroutine is locked.
func openNodeGPU(rank int) (*cuda.Device, error) {
	runtime.LockOSThread()
	d, err := cuda.Open(nodeGPUOf(rank))
	if err != nil {
		return nil, err
	}
	if err := d.MakeCurrent(); err != nil {
		_ = d.Close()
		return nil, err
	}
	return d, nil
}

// nodeFaultChild is one rank of mode "node-ok", "node-die",
// "node-late:D" or "node-timeout" (timeout_ms=nodeTimeout; the last rank
// stays alive and never enters the second call) on GPU rank.
func nodeFaultChild(t *Team, ctx *Context, rank, size int, dir, mode string) error {
	d, err := openNodeGPU(rank)
	if err != nil {
		return err
	}
	defer d.Close()
	const n = 1 << 20 // float32 elements, 4 MiB
	in := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(float32(rank+i%5)))
	}
	src, err := d.Alloc(len(in))
	if err != nil {
		return err
	}
	defer func() { _ = src.Free() }()
	dst, err := d.Alloc(len(in))
	if err != nil {
		return err
	}
	defer func() { _ = dst.Free() }()
	if err := src.CopyFromHost(0, in); err != nil {
		return err
	}
	sp, dp := src.Ptr(), dst.Ptr()
	a := Args{Coll: coll.Allreduce, Src: *(*unsafe.Pointer)(unsafe.Pointer(&sp)), Dst: *(*unsafe.Pointer)(unsafe.Pointer(&dp)),
		Count: n, Dtype: coll.Float32, Op: coll.Sum, Mem: MemCUDA}
	call := func(which string) error {
		c, err := NewColl(t, a)
		if err != nil {
			return err
		}
		defer c.Finalize()
		if err := c.Post(); err != nil {
			return err
		}
		for {
			done, err := c.Test()
			if err != nil {
				return fmt.Errorf("%s: %w", which, err)
			}
			if done {
				break
			}
			time.Sleep(20 * time.Microsecond)
		}
		if c.Runner() != "node" {
			return fmt.Errorf("%s ran on %s, not the node kernels", which, c.Runner())
		}
		got := make([]byte, len(in))
		if err := dst.CopyToHost(got, 0); err != nil {
			return err
		}
		for i := range n {
			want := float32(size*(size-1)/2 + size*(i%5))
			if v := math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:])); v != want {
				return fmt.Errorf("%s: element %d = %v, want %v", which, i, v, want)
			}
		}
		return nil
	}
	if err := call("first allreduce"); err != nil {
		return err
	}
	last := rank == size-1
	_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("set-%d", rank)), nil, 0o644)
	if mode == "node-die" && last {
		time.Sleep(time.Hour) // killed by the test
	}
	if mode == "node-timeout" && last {
		awaitExit(dir) // alive, so the watch finds nothing: only the deadline ends the others' kernels
		if err := t.Destroy(); err != nil {
			return err
		}
		return ctx.Close()
	}
	if late, ok := strings.CutPrefix(mode, "node-late:"); ok && last {
		dl, _ := time.ParseDuration(late)
		time.Sleep(dl)
	}
	start := time.Now()
	if err := call("second allreduce"); err != nil {
		fmt.Printf("collective failed after %.1f s: %v\n", time.Since(start).Seconds(), err)
	} else {
		fmt.Printf("collective done after %.1f s on the node kernels\n", time.Since(start).Seconds())
	}
	awaitExit(dir)
	if err := t.Destroy(); err != nil {
		return err
	}
	return ctx.Close()
}

// waitFiles waits until dir holds set-0 .. set-(n-1).
func waitFiles(t *testing.T, dir string, n int, outs []*syncBuffer) {
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		all := true
		for r := range n {
			if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("set-%d", r))); err != nil {
				all = false
			}
		}
		if all {
			return
		}
		require.True(t, time.Now().Before(deadline), "the ranks never finished their first allreduce: %v", outs)
	}
}

// A rank killed while the others' kernels wait for its flags: the
// watch sets the abort word, the others end within 10 s with an error
// naming it, and a new job on the same GPUs runs correctly.
func TestNodeKernelsDeadRank(t *testing.T) {
	n := nodeGPUs(t)
	cmds, outs, dir := startRanks(t, n, "node-die")
	waitFiles(t, dir, n, outs)
	time.Sleep(500 * time.Millisecond) // the others are in their kernels by now
	killed := time.Now()
	require.NoError(t, cmds[n-1].Process.Kill())
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ended := true
		for r := range n - 1 {
			ended = ended && strings.Contains(outs[r].String(), "collective failed")
		}
		if ended {
			break
		}
		require.True(t, time.Now().Before(deadline), "survivors still waiting 20 s after the kill: %v", outs)
	}
	took := time.Since(killed)
	t.Logf("the others ended %.1f s after the kill", took.Seconds())
	assert.Less(t, took, 10*time.Second)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "exit"), nil, 0o644))
	waitAll(t, cmds[:n-1], outs[:n-1], 30*time.Second)
	for r := range n - 1 {
		o := outs[r].String()
		assert.Contains(t, o, fmt.Sprintf("rank %d", n-1), "rank %d: the error names the dead rank: %s", r, o)
	}
	// The GPUs serve the next job.
	cmds2, outs2, dir2 := startRanks(t, n, "node-ok")
	waitFiles(t, dir2, n, outs2)
	require.NoError(t, os.WriteFile(filepath.Join(dir2, "exit"), nil, 0o644))
	waitAll(t, cmds2, outs2, 60*time.Second)
	for r, o := range outs2 {
		assert.Contains(t, o.String(), "collective done", "rank %d of the next job", r)
	}
}

// nodeTimeout is the timeout_ms of TestNodeKernelsKeepTheDeadline.
const nodeTimeout = 4 * time.Second

// With timeout_ms set, a node kernel waiting on a rank that is alive but
// never enters the call ends at the deadline (the watch sees nothing
// dead), failing with exec.ErrDeadline's words: the opt-in failure
// detector holds on the node kernels as on the messages.
func TestNodeKernelsKeepTheDeadline(t *testing.T) {
	n := nodeGPUs(t)
	cmds, outs, dir := startRanks(t, n, "node-timeout")
	waitFiles(t, dir, n, outs)
	set := time.Now()
	for deadline := set.Add(nodeTimeout + 20*time.Second); ; time.Sleep(20 * time.Millisecond) {
		ended := true
		for r := range n - 1 {
			ended = ended && strings.Contains(outs[r].String(), "collective ")
		}
		if ended {
			break
		}
		require.True(t, time.Now().Before(deadline), "the others still waiting %v after the deadline: %v", 20*time.Second, outs)
	}
	took := time.Since(set)
	t.Logf("the others ended %.1f s after the absent rank's first call (timeout_ms %d)", took.Seconds(), nodeTimeout.Milliseconds())
	assert.Less(t, took, nodeTimeout+5*time.Second)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "exit"), nil, 0o644))
	waitAll(t, cmds, outs, 30*time.Second)
	for r := range n - 1 {
		o := outs[r].String()
		assert.Contains(t, o, "collective failed", "rank %d", r)
		assert.Contains(t, o, "deadline exceeded", "rank %d: the error says why: %s", r, o)
		assert.Contains(t, o, "node kernel", "rank %d: the kernel, not an exchange, timed out: %s", r, o)
	}
}

// A rank late by GORING_NODE_LATE (default 3s) is waited for, and the
// call is right.
func TestNodeKernelsLateRank(t *testing.T) {
	n := nodeGPUs(t)
	late := os.Getenv("GORING_NODE_LATE")
	if late == "" {
		late = "3s"
	}
	cmds, outs, dir := startRanks(t, n, "node-late:"+late)
	waitFiles(t, dir, n, outs)
	dl, err := time.ParseDuration(late)
	require.NoError(t, err)
	for deadline := time.Now().Add(dl + 60*time.Second); ; time.Sleep(50 * time.Millisecond) {
		ended := 0
		for r := range n {
			if strings.Contains(outs[r].String(), "collective") {
				ended++
			}
		}
		if ended == n {
			break
		}
		require.True(t, time.Now().Before(deadline), "ranks still waiting %v after the late one's delay: %v", dl+60*time.Second, outs)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "exit"), nil, 0o644))
	waitAll(t, cmds, outs, 30*time.Second)
	for r, o := range outs {
		assert.Contains(t, o.String(), "collective done", "rank %d", r)
		t.Logf("rank %d: %s", r, strings.TrimSpace(o.String()))
	}
}
