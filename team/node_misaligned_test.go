package team

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/goring-hpc/goring/coll"
)

// Reductions through the team on the node kernels where one rank's
// buffers start off their elements' alignment (MPI lets a buffer start
// at any byte) and its peers' do not: that rank must run the call as its
// peers do (team/aligned.go), and every rank gets the rank-order sum.
// Allreduce (one-shot and two-shot sizes, and one in pieces past the
// ranks' 4 MiB slots: runChild) and reduce_scatter, in place and not. A
// pair runs one-shot up to 32 MiB (nodeexec.oneShotMax), so on two ranks
// every allreduce here is one-shot; the pair's two-shot kernel is checked
// by package cuda's node tests and through UCC (docs/gpu.md).
func TestNodeMisalignedThroughTheTeam(t *testing.T) {
	runNodeChildren(t, "node-misaligned", "misaligned calls", 120*time.Second)
}

// nodeMisalignedChild is one rank of TestNodeMisalignedThroughTheTeam, on
// GPU nodeGPUOf(rank): rank 1's buffers are 1 and 6 bytes past a float32
// boundary (source and destination), the others' aligned.
func nodeMisalignedChild(t *Team, ctx *Context, rank, size int, dir string) error {
	d, err := openNodeGPU(rank)
	if err != nil {
		return err
	}
	defer d.Close()
	const most = 3<<20 + 7 // float32 elements of the largest buffer: three 4 MiB pieces and a bit
	buf, err := d.Alloc(2 * (4*most + 16))
	if err != nil {
		return err
	}
	defer func() { _ = buf.Free() }()
	srcAt, dstAt := 0, 4*most+8
	if rank == 1 {
		srcAt, dstAt = 1, 4*most+8+6
	}
	base := buf.Ptr()
	ptr := func(off int) unsafe.Pointer {
		p := uintptr(base) + uintptr(off)
		return *(*unsafe.Pointer)(unsafe.Pointer(&p))
	}
	floats := func(v []float32) []byte {
		b := make([]byte, 4*len(v))
		for i, f := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
		}
		return b
	}
	k := 0
	for _, c := range []coll.Collective{coll.Allreduce, coll.ReduceScatter} {
		for _, count := range []int{1, 1001, 300001, most} {
			if c == coll.ReduceScatter {
				count /= size
				if count == 0 {
					continue
				}
			}
			for _, inPlace := range []bool{false, true} {
				k++
				whole := count
				if c == coll.ReduceScatter {
					whole = size * count
				}
				in := make([]float32, whole)
				for i := range in {
					in[i] = float32(rank*3 + (i+k)%11)
				}
				at := srcAt
				if inPlace {
					at = dstAt
				}
				if err := buf.CopyFromHost(at, floats(in)); err != nil {
					return err
				}
				a := Args{Coll: c, Src: ptr(srcAt), Dst: ptr(dstAt), Count: uint64(count), Dtype: coll.Float32, Op: coll.Sum, Mem: MemCUDA, InPlace: inPlace}
				if inPlace {
					a.Src = a.Dst
				}
				what := fmt.Sprintf("%s of %d elements (in place %v)", c, count, inPlace)
				runner, err := runNodeColl(t, a, what)
				if err != nil {
					return err
				}
				if runner != "node" {
					return fmt.Errorf("%s ran on %s, not the node kernels", what, runner)
				}
				outAt, first := dstAt, 0
				if c == coll.ReduceScatter {
					first = rank * count
					if inPlace {
						outAt += 4 * first // UCC's in-place reduce_scatter: the rank's own block of dst
					}
				}
				got := make([]byte, 4*count)
				if err := buf.CopyToHost(got, outAt); err != nil {
					return err
				}
				for j := range count {
					e := first + j
					var want float32
					for q := range size {
						want += float32(q*3 + (e+k)%11)
					}
					if g := math.Float32frombits(binary.LittleEndian.Uint32(got[4*j:])); g != want {
						return fmt.Errorf("%s: element %d = %v, want %v", what, j, g, want)
					}
				}
			}
		}
	}
	fmt.Printf("misaligned calls right: %d on the node kernels\n", k)
	awaitExit(dir)
	if err := t.Destroy(); err != nil {
		return err
	}
	return ctx.Close()
}
