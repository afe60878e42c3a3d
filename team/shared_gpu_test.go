package team

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
)

// Processes that share one GPU run CUDA allreduce and allgather as the
// leader's device work (onedevice.go). Buffers a legacy CUDA IPC handle
// cannot export, such as a stream-ordered pool's (cudaMallocAsync, which
// frameworks use), make every rank fall back to the leader algorithm's
// messages with nothing written: the call still completes, with the same
// results. Each rank is a process of its own, as under MPI; needs one
// visible GPU (CUDA_VISIBLE_DEVICES=0 on a machine of several) and a UCX
// that moves CUDA memory.
func TestSharedGPUPoolMemoryFallsBack(t *testing.T) {
	if n, err := cuda.DeviceCount(); err != nil || n != 1 {
		t.Skipf("needs exactly one visible GPU (devices %d, %v)", n, err)
	}
	for _, mode := range []string{"gpu", "gpu-pool"} {
		const size = 3
		cmds, outs, dir := startRanks(t, size, mode)
		for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			done := 0
			for _, o := range outs {
				if strings.Contains(o.String(), "gpu collectives ") || strings.Contains(o.String(), "child error") || strings.Contains(o.String(), "skip:") {
					done++
				}
			}
			if done == size {
				break
			}
			require.True(t, time.Now().Before(deadline), "%s: ranks still in the collectives: %s | %s | %s", mode, outs[0], outs[1], outs[2])
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "exit"), nil, 0o644))
		waitAll(t, cmds, outs, 60*time.Second)
		for r, o := range outs {
			if strings.Contains(o.String(), "skip:") {
				t.Skipf("%s", o)
			}
			assert.Contains(t, o.String(), "gpu collectives done", "%s rank %d", mode, r)
			// Plain device memory runs on the shared GPU as one process's
			// work; the pool's falls back to messages.
			assert.Contains(t, o.String(), fmt.Sprintf("on one device: %v", mode == "gpu"), "%s rank %d", mode, r)
			t.Logf("%s rank %d: %s", mode, r, strings.TrimSpace(o.String()))
		}
	}
}

// sharedGPUChild is a rank of TestSharedGPUPoolMemoryFallsBack: a 1 MiB
// float32 allreduce and a 64 KiB allgather on buffers of GPU 0, from
// cuMemAlloc or (pooled) the stream-ordered pool, contents checked. It
// reports whether the calls ran as one process's device work.
func sharedGPUChild(t *Team, ctx *Context, rank, size int, dir string, pooled bool) error {
	runtime.LockOSThread() // UCX's CUDA transports use this thread's context
	d, err := cuda.Open(0)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.MakeCurrent(); err != nil {
		return err
	}
	if !t.memTypes.Has(1) {
		fmt.Println("skip: the UCX loaded moves no CUDA memory")
		awaitExit(dir)
		return nil
	}
	alloc := d.Alloc
	if pooled {
		alloc = d.AllocPooled
	}
	var bufs []*cuda.Buffer
	defer func() {
		for _, b := range bufs {
			_ = b.Free()
		}
	}()
	dev := func(b []byte) (unsafe.Pointer, *cuda.Buffer, error) {
		buf, err := alloc(len(b))
		if err != nil {
			return nil, nil, err
		}
		bufs = append(bufs, buf)
		if err := buf.CopyFromHost(0, b); err != nil {
			return nil, nil, err
		}
		addr := buf.Ptr()
		// A device address as C's void*, as UCC hands it over.
		return *(*unsafe.Pointer)(unsafe.Pointer(&addr)), buf, nil
	}
	const n = 1 << 18 // float32 elements
	in := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(float32(rank+i%7)))
	}
	sp, _, err := dev(in)
	if err != nil {
		return err
	}
	dp, dst, err := dev(make([]byte, 4*n))
	if err != nil {
		return err
	}
	const B = 64 << 10
	block := make([]byte, B)
	for i := range block {
		block[i] = byte(rank*31 + i)
	}
	gp, _, err := dev(block)
	if err != nil {
		return err
	}
	rp, res, err := dev(make([]byte, size*B))
	if err != nil {
		return err
	}
	oneDevice := true
	for _, a := range []Args{
		{Coll: coll.Allreduce, Src: sp, Dst: dp, Count: n, Dtype: coll.Float32, Op: coll.Sum, Mem: MemCUDA},
		{Coll: coll.Allgather, Src: gp, Dst: rp, Count: B, Dtype: coll.Uint8, Mem: MemCUDA},
	} {
		c, err := NewColl(t, a)
		if err != nil {
			return err
		}
		if !onSharedGPU(c.run) {
			return fmt.Errorf("%s: not planned on the shared GPU (alg %s)", a.Coll, c.alg)
		}
		if err := c.Post(); err != nil {
			return err
		}
		for {
			done, err := c.Test()
			if err != nil {
				return fmt.Errorf("%s: %w", a.Coll, err)
			}
			if done {
				break
			}
			time.Sleep(50 * time.Microsecond)
		}
		one := onSharedGPU(c.run) // a call that fell back runs the messages' runner
		oneDevice = oneDevice && one
		c.Finalize()
	}
	got := make([]byte, 4*n)
	if err := dst.CopyToHost(got, 0); err != nil {
		return err
	}
	for i := range n {
		want := float32(size*(size-1)/2 + size*(i%7))
		if v := math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:])); v != want {
			return fmt.Errorf("allreduce element %d = %v, want %v", i, v, want)
		}
	}
	all := make([]byte, size*B)
	if err := res.CopyToHost(all, 0); err != nil {
		return err
	}
	for q := range size {
		for i := range B {
			if all[q*B+i] != byte(q*31+i) {
				return fmt.Errorf("allgather block %d byte %d = %d, want %d", q, i, all[q*B+i], byte(q*31+i))
			}
		}
	}
	fmt.Printf("gpu collectives done, on one device: %v\n", oneDevice)
	awaitExit(dir)
	if err := t.Destroy(); err != nil {
		return err
	}
	return ctx.Close()
}

// onSharedGPU reports whether r is a call on package direct's device
// backend.
func onSharedGPU(r Runner) bool {
	d, ok := r.(*directRunner)
	return ok && d.cfg.Device != nil
}
