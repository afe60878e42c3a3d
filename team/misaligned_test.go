package team

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
)

// MPI and UCC let a caller's buffers start anywhere: a float array at an
// odd offset of a byte buffer is legal. A rank whose buffers are not
// aligned to the element size reduces like its peers, whatever runner the
// team picks: it must neither refuse the call alone (its peers would wait
// for it for ever) nor reduce wrongly. Rank 0's buffers start 1 byte past
// an aligned address, rank 1's 2 bytes; every option set that changes the
// runner, allreduce and reduce_scatter, in place and not.
func TestMisalignedHostBuffers(t *testing.T) {
	for _, opts := range []string{"", "cpath_max=0", "cpath_max=0;crossmem=2", "cpath_max=0;lanes=2"} {
		misalignedReductions(t, newTestTeams(t, 3, opts), MemHost, []string{""}, func(n, skew int) floatBuf {
			b := cbuf(t, 4*n+8)[skew:][:4*n]
			return floatBuf{p: ptr(b), set: func(v []float32) { putFloats(b, v) }, get: func() []float32 { return getFloats(b, n) }}
		})
	}
}

// The same on CUDA buffers of GPU 0, teams of this process (ipc=n: UCX
// moves the bytes), by the team's choice and by a named algorithm (the
// messages, whose reductions are kernels that want aligned elements).
func TestMisalignedDeviceBuffers(t *testing.T) {
	g, teams := gpuTestTeams(t, 3)
	misalignedReductions(t, teams, MemCUDA, []string{"", "ring"}, func(n, skew int) floatBuf {
		r, err := g.Alloc(int64(4*n + 8))
		require.NoError(t, err)
		return deviceFloats(t, g, r.Slice(int64(skew), int64(4*n)), n)
	})
}

func misalignedReductions(t *testing.T, teams []*Team, mem MemArg, algs []string, alloc func(n, skew int) floatBuf) {
	n := len(teams)
	for _, alg := range algs {
		for _, c := range []coll.Collective{coll.Allreduce, coll.ReduceScatter} {
			for _, inPlace := range []bool{false, true} {
				for _, count := range []int{1, 1000, 70001} {
					name := fmt.Sprintf("%s/%q/in place %v/%d", c, alg, inPlace, count)
					whole, outLen := count, count
					if c == coll.ReduceScatter {
						whole = n * count
						if inPlace {
							outLen = whole
						}
					}
					srcs, dsts := make([]floatBuf, n), make([]floatBuf, n)
					colls := make([]*Coll, n)
					for r := range colls {
						skew := []int{1, 2, 0}[r%3]
						dsts[r] = alloc(outLen, skew)
						in := make([]float32, whole)
						for i := range in {
							in[i] = float32(r + i%7)
						}
						a := Args{Coll: c, Dst: dsts[r].p, Count: uint64(count), Dtype: coll.Float32, Op: coll.Sum, InPlace: inPlace, Alg: alg, Mem: mem}
						if inPlace {
							dsts[r].set(in)
						} else {
							srcs[r] = alloc(whole, skew)
							srcs[r].set(in)
							a.Src = srcs[r].p
						}
						k, err := NewColl(teams[r], a)
						require.NoError(t, err, "%s rank %d (buffers %d bytes past alignment)", name, r, skew)
						colls[r] = k
					}
					for _, k := range colls {
						require.NoError(t, k.Post(), name)
					}
					pollAll(t, colls)
					for r, k := range colls {
						got, off := dsts[r].get(), 0
						if c == coll.ReduceScatter && inPlace {
							off = r * count
						}
						for j := range count {
							e := j
							if c == coll.ReduceScatter {
								e = r*count + j
							}
							want := float32(n*(n-1)/2 + n*(e%7))
							require.Equal(t, want, got[off+j], "%s rank %d element %d (%s, %s)", name, r, j, k.Algorithm(), k.Runner())
						}
					}
					for _, k := range colls {
						k.Finalize()
					}
				}
			}
		}
	}
}

// A caller that does not know where its buffers are (MemUnknown) may pass
// a source on the GPU and a destination on the host, or the other way:
// goring runs a call on one memory, so it refuses the call with both
// places named instead of reading one buffer as if it were in the other.
func TestBuffersInTwoMemoriesAreRefused(t *testing.T) {
	g := openTeamGPU(t)
	teams := newTestTeams(t, 2, "ipc=n")
	r, err := g.Alloc(4096)
	require.NoError(t, err)
	addr := r.Addr()
	dev := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	host := ptr(cbuf(t, 4096))
	for _, c := range []struct{ src, dst unsafe.Pointer }{{dev, host}, {host, dev}} {
		_, err := NewColl(teams[0], Args{Coll: coll.Allreduce, Src: c.src, Dst: c.dst, Count: 1024, Dtype: coll.Float32, Op: coll.Sum, Mem: MemUnknown})
		require.Error(t, err)
		require.Contains(t, err.Error(), "must be in one memory")
	}
	k, err := NewColl(teams[0], Args{Coll: coll.Allreduce, Src: host, Dst: host, Count: 1024, Dtype: coll.Float32, Op: coll.Sum, Mem: MemUnknown})
	require.NoError(t, err, "both on the host")
	k.Finalize()
}
