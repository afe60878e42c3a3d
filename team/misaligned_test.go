package team

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
)

// MPI and UCC let a caller's buffers start anywhere: a float array at an
// odd offset of a byte buffer is legal. A rank whose host buffers are not
// aligned to the element size reduces like its peers, whatever runner the
// team picks: it must neither refuse the call alone (its peers would wait
// for it for ever) nor reduce wrongly. Rank 0's buffers start 1 byte past
// an aligned address, rank 1's 2 bytes; every option set that changes the
// runner, allreduce and reduce_scatter, in place and not.
func TestMisalignedHostBuffers(t *testing.T) {
	const n = 3
	for _, opts := range []string{"", "cpath_max=0", "cpath_max=0;crossmem=2", "cpath_max=0;lanes=2"} {
		teams := newTestTeams(t, n, opts)
		for _, c := range []coll.Collective{coll.Allreduce, coll.ReduceScatter} {
			for _, inPlace := range []bool{false, true} {
				for _, count := range []int{1, 1000, 70001} {
					name := fmt.Sprintf("%q/%s/in place %v/%d", opts, c, inPlace, count)
					whole := count
					if c == coll.ReduceScatter {
						whole = n * count
					}
					outLen := whole
					if c == coll.ReduceScatter && !inPlace {
						outLen = count
					}
					srcs, dsts := make([][]byte, n), make([][]byte, n)
					colls := make([]*Coll, n)
					for r := range colls {
						skew := []int{1, 2, 0}[r]
						srcs[r] = cbuf(t, 4*whole+8)[skew:][:4*whole]
						dsts[r] = cbuf(t, 4*outLen+8)[skew:][:4*outLen]
						in := srcs[r]
						if inPlace {
							in = dsts[r]
						}
						for i := range whole {
							binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(float32(r+i%7)))
						}
						a := Args{Coll: c, Dst: ptr(dsts[r]), Count: uint64(count), Dtype: coll.Float32, Op: coll.Sum, InPlace: inPlace, Mem: MemHost}
						if !inPlace {
							a.Src = ptr(srcs[r])
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
						off := 0
						if c == coll.ReduceScatter && inPlace {
							off = r * count
						}
						for j := range count {
							e := j
							if c == coll.ReduceScatter {
								e = r*count + j
							}
							want := float32(n*(n-1)/2 + n*(e%7))
							got := math.Float32frombits(binary.LittleEndian.Uint32(dsts[r][4*(off+j):]))
							require.Equal(t, want, got, "%s rank %d element %d (%s, %s)", name, r, j, k.Algorithm(), k.Runner())
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
