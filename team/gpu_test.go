package team

import (
	"encoding/binary"
	"math"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/cudaexec"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/ucx"
)

// The team layer on CUDA buffers: every collective it runs, in place and
// not, on teams of this process whose buffers are on GPU 0, contents
// checked after the calls complete (goring's device work is done when a
// call reports done). The memory type is given as CUDA and as unknown
// (the driver classifies it).
func TestTeamCollectivesOnGPU(t *testing.T) {
	g := openTeamGPU(t)
	const n = 4
	// ipc=n: these ranks are teams of one process, and CUDA IPC does not
	// map a process's own memory (cuIpcOpenMemHandle fails with an invalid
	// context), so neither goring's push nor the shared-GPU leader can run
	// between them; UCX moves the buffers. Processes of their own on one
	// GPU: TestSharedGPUPoolMemoryFallsBack.
	teams := newTestTeams(t, n, "ipc=n")
	if !teams[0].memTypes.Has(1) {
		t.Skipf("the UCX loaded (%s) moves no CUDA memory", ucx.Library())
	}
	teams[0].ctx.SetDevicePoll(37 * time.Microsecond) // the teams' GPUs are opened at their first calls
	defer func() {
		for r, tm := range teams {
			assert.Equal(t, 37*time.Microsecond, tm.gpus[0].g.PollEvery, "rank %d's GPU polls as its context says", r)
		}
	}()
	dev := func(b []byte) (unsafe.Pointer, exec.Region) {
		r, err := g.Alloc(int64(len(b)))
		require.NoError(t, err)
		require.NoError(t, g.Write(r, b))
		addr := r.Addr()
		// A device address as C's void*, as UCC hands it over; Go never
		// dereferences it.
		return *(*unsafe.Pointer)(unsafe.Pointer(&addr)), r
	}
	read := func(r exec.Region) []byte {
		b := make([]byte, r.Len())
		require.NoError(t, g.Read(b, r))
		return b
	}
	f32 := func(vals ...float32) []byte {
		b := make([]byte, 4*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		return b
	}
	for _, count := range []int{1, 1001, 65536} {
		for _, mem := range []MemArg{MemCUDA, MemUnknown} {
			// allreduce, out of place and in place
			for _, inPlace := range []bool{false, true} {
				args := make([]Args, n)
				dsts := make([]exec.Region, n)
				for r := range n {
					vals := make([]float32, count)
					for i := range vals {
						vals[i] = float32(r + i%5)
					}
					sp, _ := dev(f32(vals...))
					dp, dr := dev(make([]byte, 4*count))
					if inPlace {
						dp, dr = dev(f32(vals...))
						sp = nil
					}
					dsts[r] = dr
					args[r] = Args{Coll: coll.Allreduce, Src: sp, Dst: dp, Count: uint64(count), Dtype: coll.Float32, Op: coll.Sum, InPlace: inPlace, Mem: mem}
				}
				runAll(t, teams, args)
				for r := range n {
					got := read(dsts[r])
					for i := range count {
						want := float32(n*(n-1)/2 + n*(i%5))
						require.Equal(t, want, math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:])), "allreduce count %d in place %v rank %d element %d", count, inPlace, r, i)
					}
				}
			}
			// allgather
			args := make([]Args, n)
			dsts := make([]exec.Region, n)
			for r := range n {
				src := make([]byte, count)
				for i := range src {
					src[i] = byte(r*31 + i)
				}
				sp, _ := dev(src)
				dp, dr := dev(make([]byte, n*count))
				dsts[r] = dr
				args[r] = Args{Coll: coll.Allgather, Src: sp, Dst: dp, Count: uint64(count), Dtype: coll.Uint8, Mem: mem}
			}
			runAll(t, teams, args)
			for r := range n {
				got := read(dsts[r])
				for q := range n {
					for i := range count {
						require.Equal(t, byte(q*31+i), got[q*count+i], "allgather count %d rank %d block %d byte %d", count, r, q, i)
					}
				}
			}
			// reduce_scatter (int32 max) and bcast (root 1)
			rs := make([]Args, n)
			bc := make([]Args, n)
			rsDst := make([]exec.Region, n)
			bcBuf := make([]exec.Region, n)
			for r := range n {
				src := make([]byte, 4*n*count)
				for i := range n * count {
					binary.LittleEndian.PutUint32(src[4*i:], uint32(int32(r*1000-i)))
				}
				sp, _ := dev(src)
				dp, dr := dev(make([]byte, 4*count))
				rsDst[r] = dr
				rs[r] = Args{Coll: coll.ReduceScatter, Src: sp, Dst: dp, Count: uint64(count), Dtype: coll.Int32, Op: coll.Max, Mem: mem}
				msg := make([]byte, count)
				for i := range msg {
					if r == 1 {
						msg[i] = byte(i*7 + 3)
					}
				}
				bp, br := dev(msg)
				bcBuf[r] = br
				bc[r] = Args{Coll: coll.Bcast, Src: bp, Dst: bp, Count: uint64(count), Dtype: coll.Uint8, Root: 1, Mem: mem}
			}
			runAll(t, teams, rs)
			runAll(t, teams, bc)
			for r := range n {
				got := read(rsDst[r])
				for i := range count {
					want := int32((n-1)*1000 - (r*count + i))
					require.Equal(t, want, int32(binary.LittleEndian.Uint32(got[4*i:])), "reduce_scatter count %d rank %d element %d", count, r, i)
				}
				b := read(bcBuf[r])
				for i := range count {
					require.Equal(t, byte(i*7+3), b[i], "bcast count %d rank %d byte %d", count, r, i)
				}
			}
		}
	}
}

// openTeamGPU opens GPU 0 for a test of teams of this process, current
// on the test's thread, which stays locked to it: UCX's CUDA transports
// use the thread's context. It skips the test where no driver loads and
// closes the GPU after the teams' own clean-up (registered later, run
// first).
func openTeamGPU(t *testing.T) *cudaexec.GPU {
	t.Helper()
	g, err := cudaexec.Open(0)
	if cuda.IsNoDriver(err) {
		t.Skipf("skipping GPU test: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	runtime.LockOSThread()
	require.NoError(t, g.Device().MakeCurrent())
	return g
}
