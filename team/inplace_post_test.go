package team

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cudaexec"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/sched"
)

// An in-place allreduce or reduce_scatter reads its input when it is
// posted, not when it is made: the caller may write the buffer between
// the two (a triggered post's input is written by work queued before
// it; a persistent call is made once and posted with new data each
// time). Every algorithm, with data written only after the call was
// made, posted twice with different data; contents checked. Host memory
// here, CUDA memory in TestInPlaceInputIsReadAtPostOnGPU.
func TestInPlaceInputIsReadAtPost(t *testing.T) {
	teams := newTestTeams(t, 4, "")
	inPlaceReadAtPost(t, teams, MemHost, func(n int) floatBuf {
		b := cbuf(t, 4*n)
		return floatBuf{p: ptr(b), set: func(v []float32) { copy(f32s(b), v) }, get: func() []float32 { return append([]float32(nil), f32s(b)...) }}
	})
}

// The same on CUDA buffers of GPU 0, teams of this process (ipc=n: UCX
// moves the bytes, TestTeamCollectivesOnGPU says why).
func TestInPlaceInputIsReadAtPostOnGPU(t *testing.T) {
	g, teams := gpuTestTeams(t, 4)
	inPlaceReadAtPost(t, teams, MemCUDA, func(n int) floatBuf {
		r, err := g.Alloc(int64(4 * n))
		require.NoError(t, err)
		return deviceFloats(t, g, r, n)
	})
}

// gpuTestTeams opens GPU 0 and makes n teams of this process on it
// (ipc=n: UCX moves the bytes, TestTeamCollectivesOnGPU says why); it
// skips where the UCX loaded moves no CUDA memory.
func gpuTestTeams(t *testing.T, n int) (*cudaexec.GPU, []*Team) {
	g := openTeamGPU(t)
	teams := newTestTeams(t, n, "ipc=n")
	if !teams[0].memTypes.Has(1) {
		t.Skip("the UCX loaded moves no CUDA memory")
	}
	teams[0].ctx.SetDevicePoll(20 * time.Microsecond)
	return g, teams
}

// deviceFloats is a floatBuf of n float32s at the start of device region
// r of g.
func deviceFloats(t *testing.T, g *cudaexec.GPU, r exec.Region, n int) floatBuf {
	addr := r.Addr()
	return floatBuf{
		p: *(*unsafe.Pointer)(unsafe.Pointer(&addr)), // a device address as C's void*
		set: func(v []float32) {
			b := make([]byte, 4*len(v))
			putFloats(b, v)
			require.NoError(t, g.Write(r.Slice(0, int64(len(b))), b))
		},
		get: func() []float32 {
			b := make([]byte, 4*n)
			require.NoError(t, g.Read(b, r.Slice(0, int64(len(b)))))
			return getFloats(b, n)
		},
	}
}

// putFloats writes v into b, little-endian.
func putFloats(b []byte, v []float32) {
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
}

// getFloats reads n float32s from b, little-endian.
func getFloats(b []byte, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// floatBuf is a test's buffer of float32s, in host or device memory.
type floatBuf struct {
	p   unsafe.Pointer
	set func([]float32)
	get func() []float32
}

func inPlaceReadAtPost(t *testing.T, teams []*Team, mem MemArg, alloc func(n int) floatBuf) {
	n := len(teams)
	for _, c := range []coll.Collective{coll.Allreduce, coll.ReduceScatter} {
		for _, alg := range append([]string{""}, sched.AlgorithmNames(c)...) {
			for _, count := range []int{3, 1000, 70001} {
				name := fmt.Sprintf("%s/%q/%d", c, alg, count)
				whole := count // reduce_scatter: count is each rank's block
				if c == coll.ReduceScatter {
					whole = n * count
				}
				bufs := make([]floatBuf, n)
				colls := make([]*Coll, n)
				for r := range colls {
					bufs[r] = alloc(whole)
					// What the call must not read: the buffer as it was
					// when the call was made.
					bufs[r].set(repeat(-1e6, whole))
					k, err := NewColl(teams[r], Args{Coll: c, Dst: bufs[r].p, Count: uint64(count), Dtype: coll.Float32, Op: coll.Sum, InPlace: true, Alg: alg, Mem: mem})
					if err != nil && alg != "" {
						t.Logf("%s: %v", name, err) // an algorithm that does not serve the shape
						for _, k := range colls[:r] {
							k.Finalize()
						}
						colls = nil
						break
					}
					require.NoError(t, err, name)
					colls[r] = k
				}
				for post := range 2 {
					if colls == nil {
						break
					}
					for r, k := range colls {
						v := make([]float32, whole)
						for i := range v {
							v[i] = float32(r + i%5 + 10*post)
						}
						bufs[r].set(v)
						require.NoError(t, k.Post(), "%s post %d rank %d", name, post, r)
					}
					pollAll(t, colls)
					for r, k := range colls {
						got, off := bufs[r].get(), 0
						if c == coll.ReduceScatter {
							off = r * count
						}
						for j := off; j < off+count; j++ {
							want := float32(n*(n-1)/2 + n*(j%5) + n*10*post)
							require.Equal(t, want, got[j], "%s post %d rank %d element %d (%s)", name, post, r, j, k.Algorithm())
						}
					}
				}
				for _, k := range colls {
					k.Finalize()
				}
			}
		}
	}
}

func repeat(v float32, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = v
	}
	return s
}
