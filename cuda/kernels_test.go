package cuda

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/reduce"
)

// The embedded kernels are what scripts/build_kernels.sh makes from the
// source in the tree: the MANIFEST records the hashes of the source, the
// script and every output. Editing reduce.cu (or the script) without
// `make kernels` fails here, on any machine, GPU or not.
func TestKernelManifest(t *testing.T) {
	f, err := os.Open("kernels/MANIFEST")
	require.NoError(t, err)
	defer f.Close()
	files := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		switch {
		case len(w) == 3 && w[0] == "source":
			files["kernels/"+w[1]] = w[2]
		case len(w) == 3 && w[0] == "script":
			files["../scripts/"+w[1]] = w[2]
		case len(w) == 3 && w[0] == "output":
			files["kernels/"+w[1]] = w[2]
		}
	}
	require.NoError(t, sc.Err())
	require.Len(t, files, 18, "five sources (reduce.cu, node.cu, copylist.cu, reducelist.cu, ops.cuh), the script and three outputs per module")
	for path, want := range files {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		sum := sha256.Sum256(b)
		assert.Equal(t, want, hex.EncodeToString(sum[:]), "%s differs from kernels/MANIFEST: run `make kernels` and commit what it writes", path)
	}
	// The PTX must stay loadable by a CUDA 13.0 driver (ISA 9.0).
	ptxOf := func(module string) string {
		b, err := readImage("kernels/" + module + "_compute80.ptx.gz")
		require.NoError(t, err)
		assert.Contains(t, string(b), "\n.version 9.0\n", module)
		return string(b)
	}
	ptx := ptxOf("reduce")
	assert.Contains(t, ptx, ".entry goring_copy_multi(")
	nodePTX := ptxOf("node")
	assert.Contains(t, nodePTX, ".entry goring_node_allgather(")
	assert.Contains(t, ptxOf("copylist"), ".entry goring_copy_list(")
	listPTX := ptxOf("reducelist")
	for _, dt := range coll.Dtypes {
		for _, op := range coll.Ops {
			if coll.Supports(op, dt) {
				for _, alg := range []string{"oneshot", "twoshot", "reduce_scatter"} {
					assert.Contains(t, string(nodePTX), ".entry goring_node_"+alg+"_"+dt.String()+"_"+op.String()+"(", "node kernel %s for %v/%v", alg, dt, op)
				}
			}
		}
	}
	for _, dt := range coll.Dtypes {
		for _, op := range coll.Ops {
			if coll.Supports(op, dt) {
				assert.Contains(t, string(ptx), ".entry goring_reduce_"+dt.String()+"_"+op.String()+"(", "kernel for %v/%v", dt, op)
				assert.Contains(t, string(ptx), ".entry goring_reduce_multi_"+dt.String()+"_"+op.String()+"(", "multi kernel for %v/%v", dt, op)
				assert.Contains(t, listPTX, ".entry goring_reduce_list_"+dt.String()+"_"+op.String()+"(", "reduce-list kernel for %v/%v", dt, op)
			}
		}
	}
}

func TestKernelImageChoice(t *testing.T) {
	for _, c := range []struct {
		major, minor int
		want         string
	}{{8, 0, "sm80"}, {8, 9, "sm80"}, {9, 0, "sm90"}, {10, 0, "compute80.ptx"}, {12, 1, "compute80.ptx"}} {
		name, err := kernelImage(c.major, c.minor)
		require.NoError(t, err)
		assert.Contains(t, name, c.want, "%d.%d", c.major, c.minor)
	}
	_, err := kernelImage(7, 5)
	assert.ErrorContains(t, err, "need 8.0 or newer")
}

// finiteInput is random finite data of dtype dt, including zeros of both
// signs, subnormals and values whose sums and products overflow to
// infinity. No input is NaN or infinite: Inf-Inf and Inf*0 make NaNs whose
// payloads the host CPU and the GPU choose differently (IEEE leaves them
// open), which says nothing about the kernels.
func finiteInput(rng *rand.Rand, dt coll.Dtype, n int) []byte {
	b := make([]byte, n*dt.Size())
	for i := range n {
		o := b[i*dt.Size():]
		switch dt {
		case coll.Float32:
			v := float32(rng.NormFloat64() * 1e3)
			switch rng.IntN(16) {
			case 0:
				v = float32(math.Copysign(0, float64(rng.IntN(2)*2-1)))
			case 1:
				v = math.Float32frombits(rng.Uint32() & 0x807fffff) // subnormal
			case 2:
				v = 3e38
			}
			binary.LittleEndian.PutUint32(o, math.Float32bits(v))
		case coll.Float64:
			v := rng.NormFloat64() * 1e6
			switch rng.IntN(16) {
			case 0:
				v = math.Copysign(0, float64(rng.IntN(2)*2-1))
			case 1:
				v = math.Float64frombits(rng.Uint64() & 0x800fffffffffffff)
			case 2:
				v = 1.7e308
			}
			binary.LittleEndian.PutUint64(o, math.Float64bits(v))
		case coll.Float16:
			h := uint16(rng.Uint32())
			if h&0x7c00 == 0x7c00 {
				h &^= 0x4000 // Inf or NaN -> a finite value
			}
			binary.LittleEndian.PutUint16(o, h)
		case coll.Bfloat16:
			h := uint16(rng.Uint32())
			if h&0x7f80 == 0x7f80 {
				h &^= 0x4000
			}
			binary.LittleEndian.PutUint16(o, h)
		default:
			for k := range dt.Size() {
				o[k] = byte(rng.Uint32())
			}
			if rng.IntN(8) == 0 {
				for k := range dt.Size() {
					o[k] = 0 // zeros for the logical ops
				}
			}
		}
	}
	return b
}

// Every dtype and op on the GPU gives the host's result bit for bit, on
// aligned buffers (the 16-byte vector path) and misaligned ones (the
// element path), odd lengths included.
func TestReduceKernelsMatchHost(t *testing.T) {
	d := devices(t, 1)[0]
	img, err := d.KernelImage()
	require.NoError(t, err)
	t.Logf("kernels loaded from %s", img)
	s, err := d.NewStream()
	require.NoError(t, err)
	defer s.Destroy()
	const maxElems = 100003
	dbuf, err := d.Alloc(maxElems*8 + 64)
	require.NoError(t, err)
	defer dbuf.Free()
	sbuf, err := d.Alloc(maxElems*8 + 64)
	require.NoError(t, err)
	defer sbuf.Free()
	rng := rand.New(rand.NewPCG(1, 2))
	cases := 0
	for _, dt := range coll.Dtypes {
		for _, op := range coll.Ops {
			if !coll.Supports(op, dt) {
				continue
			}
			host, err := reduce.Kernel(dt, op)
			require.NoError(t, err)
			for _, c := range []struct{ n, doff, soff int }{{1, 0, 0}, {3, 0, 0}, {1000, 0, 0}, {maxElems, 0, 0}, {1001, dt.Size(), 0}, {777, 0, 3 * dt.Size()}, {4099, 16, 32}} {
				nb := c.n * dt.Size()
				a, b := finiteInput(rng, dt, c.n), finiteInput(rng, dt, c.n)
				require.NoError(t, dbuf.CopyFromHost(c.doff, a))
				require.NoError(t, sbuf.CopyFromHost(c.soff, b))
				require.NoError(t, ReduceAsync(s, dbuf, c.doff, sbuf, c.soff, nb, dt, op))
				require.NoError(t, s.Synchronize())
				got := make([]byte, nb)
				require.NoError(t, dbuf.CopyToHost(got, c.doff))
				want := append([]byte(nil), a...)
				host(want, b)
				if !assert.Equal(t, want, got, "%v/%v n=%d offsets %d/%d", dt, op, c.n, c.doff, c.soff) {
					for i := 0; i < nb; i += dt.Size() {
						if string(want[i:i+dt.Size()]) != string(got[i:i+dt.Size()]) {
							t.Logf("first difference at element %d: a=% x b=% x want % x got % x", i/dt.Size(), a[i:i+dt.Size()], b[i:i+dt.Size()], want[i:i+dt.Size()], got[i:i+dt.Size()])
							break
						}
					}
					return
				}
				cases++
			}
		}
	}
	t.Logf("%d (dtype, op, size, alignment) cases bit-identical to the host", cases)
}

func TestReduceRejectsBadInput(t *testing.T) {
	d := devices(t, 1)[0]
	s, err := d.NewStream()
	require.NoError(t, err)
	defer s.Destroy()
	b, err := d.Alloc(64)
	require.NoError(t, err)
	defer b.Free()
	assert.ErrorContains(t, ReduceAsync(s, b, 0, b, 32, 6, coll.Float32, coll.Sum), "whole number")
	assert.ErrorContains(t, ReduceAsync(s, b, 0, b, 32, 8, coll.Float32, coll.Bxor), "not defined")
	assert.ErrorIs(t, ReduceAsync(s, b, 0, b, 32, 64, coll.Float32, coll.Sum), ErrOutOfRange)
	assert.ErrorContains(t, ReduceAddrAsync(s, b.Ptr()+2, b.Ptr()+32, 8, coll.Float32, coll.Sum), "not aligned")
}

// The reduction's speed against a copy of the same size, in one run:
// GORING_CUDA_BENCH=1 ./cuda.test -test.run ReduceBandwidth -test.v. A
// float32 sum reads two buffers and writes one (3n bytes), a copy reads
// one and writes one (2n); both are counted as bytes read plus written.
func TestReduceBandwidth(t *testing.T) {
	if os.Getenv(envBench) == "" {
		t.Skipf("set %s=1 to measure", envBench)
	}
	d := devices(t, 1)[0]
	const n = 256 << 20
	a, err := d.Alloc(n)
	require.NoError(t, err)
	defer a.Free()
	b, err := d.Alloc(n)
	require.NoError(t, err)
	defer b.Free()
	require.NoError(t, a.Memset(0, n, 0))
	require.NoError(t, b.Memset(0, n, 0))
	s, err := d.NewStream()
	require.NoError(t, err)
	defer s.Destroy()
	timeIt := func(f func() error) time.Duration {
		start, _ := d.NewEvent(true)
		end, _ := d.NewEvent(true)
		defer start.Destroy()
		defer end.Destroy()
		for range 3 {
			require.NoError(t, f())
		}
		const reps = 20
		require.NoError(t, start.Record(s))
		for range reps {
			require.NoError(t, f())
		}
		require.NoError(t, end.Record(s))
		require.NoError(t, end.Synchronize())
		el, err := Elapsed(start, end)
		require.NoError(t, err)
		return el / reps
	}
	cp := timeIt(func() error { return CopyAsync(s, a, 0, b, 0, n) })
	red := timeIt(func() error { return ReduceAsync(s, a, 0, b, 0, n, coll.Float32, coll.Sum) })
	cpRate := 2 * float64(n) / cp.Seconds() / 1e9
	redRate := 3 * float64(n) / red.Seconds() / 1e9
	fmt.Printf("cuda: 256 MiB on %s: copy %v (%.0f GB/s read+written), float32 sum %v (%.0f GB/s read+written), ratio %.3f\n",
		must(d.Name()), cp, cpRate, red, redRate, redRate/cpRate)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
