package cexec_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/goring-hpc/goring/cexec"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/reduce"
	"github.com/stretchr/testify/require"
)

// The tests run exec/reduce.Into, the Go reference, and cexec.Reduce on
// copies of the same dst and the same src and require identical bytes, for
// every valid (dtype, op) pair. Float NaNs are compared bit for bit, so the
// C kernels must reproduce which NaN Go's arithmetic and min/max return.

// buffer returns n zero bytes aligned to 8 (backed by []uint64), so every
// dtype's alignment check passes whatever n is.
func buffer(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	w := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n)
}

func put(d coll.Dtype, b []byte, i int, v uint64) {
	switch sz := d.Size(); sz {
	case 1:
		b[i] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	default:
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
}

func get(d coll.Dtype, b []byte, i int) uint64 {
	switch d.Size() {
	case 1:
		return uint64(b[i])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b[2*i:]))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return binary.LittleEndian.Uint64(b[8*i:])
}

// encode builds a buffer of dtype d holding the given element bits.
func encode(d coll.Dtype, vals []uint64) []byte {
	b := buffer(len(vals) * d.Size())
	for i, v := range vals {
		put(d, b, i, v)
	}
	return b
}

// specials returns element bit patterns of d that exercise the edge cases
// of every operator.
func specials(d coll.Dtype) []uint64 {
	switch d {
	case coll.Float16:
		return []uint64{
			0x0000, 0x8000, 0x7c00, 0xfc00, // ±0, ±Inf
			0x7e00, 0xfe00, 0x7c01, 0xfc01, 0x7dff, 0x7fff, 0xffff, 0x7e55, 0xfd2a, // NaNs: quiet, signalling, payloads, signs
			0x0001, 0x8001, 0x03ff, 0x83ff, 0x0200, 0x0400, 0x8400, // subnormals, smallest normal
			0x7bff, 0xfbff, 0x7bfe, // largest finite
			0x3c00, 0xbc00, 0x3c01, 0x3c03, 0x4000, 0x3800, // 1, -1, 1+ulp, 2, 0.5
			0x1000, 0x9000, 0x1400, 0x0c00, // 2^-11, 2^-10, 2^-12: sums with 1 tie or round
			0x5bff, 0x5c00, 0x2000, 0x2001, // products near overflow / subnormal range
		}
	case coll.Bfloat16:
		return []uint64{
			0x0000, 0x8000, 0x7f80, 0xff80,
			0x7fc0, 0xffc0, 0x7f81, 0xff81, 0x7fbf, 0x7fff, 0xffff, 0x7fa5, 0xffd3,
			0x0001, 0x8001, 0x007f, 0x807f, 0x0040, 0x0080, 0x8080,
			0x7f7f, 0xff7f, 0x7f7e,
			0x3f80, 0xbf80, 0x3f81, 0x3f83, 0x4000, 0x3f00,
			0x3b80, 0xbb80, 0x3c00, 0x3b00, // 2^-8, 2^-7, 2^-9: ties against 1
			0x5f80, 0x5f7f, 0x2000, 0x1f80, // products near overflow / subnormal range
		}
	case coll.Float32:
		return []uint64{
			0x00000000, 0x80000000, 0x7f800000, 0xff800000,
			0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fbfffff, 0x7fc00001, 0xffffffff, 0x7fe12345, 0xffa54321,
			0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x80800000,
			0x7f7fffff, 0xff7fffff, 0x7f7ffffe,
			0x3f800000, 0xbf800000, 0x3f800001, 0x40000000, 0x3f000000,
			0x33800000, 0x33000000, 0xb3800000, // 2^-24, 2^-25 (ties against 1)
			0x477fef00, 0x477ff000, 0x477fe000, // 65519, 65520, 65504: float16 overflow edge
			0x3f801000, 0x3f803000, 0x3f808000, 0x3f818000, // ties when narrowed to half / bfloat16
			0x5f800000, 0x1f800000, // 2^64, 2^-64: products overflow / underflow
		}
	case coll.Float64:
		return []uint64{
			0, 1 << 63, 0x7ff0000000000000, 0xfff0000000000000,
			0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001, 0xfff0000000000001,
			0x7ff7ffffffffffff, 0x7ff8000000000001, 0xffffffffffffffff, 0x7ffc0123456789ab, 0xfff4000000000123,
			0x0000000000000001, 0x8000000000000001, 0x000fffffffffffff, 0x0010000000000000, 0x8010000000000000,
			0x7fefffffffffffff, 0xffefffffffffffff, 0x7feffffffffffffe,
			0x3ff0000000000000, 0xbff0000000000000, 0x3ff0000000000001, 0x4000000000000000, 0x3fe0000000000000,
			0x3ca0000000000000, 0x3cb0000000000000, 0xbca0000000000000, // 2^-53, 2^-52: ties against 1
			0x5ff0000000000000, 0x1ff0000000000000, // 2^512, 2^-512
		}
	}
	// Integers: the same patterns cover both signednesses. With hi the top
	// bit: hi = min, hi-1 = max, hi+1 = min+1 for signed types, and mask
	// = -1, mask-1 = -2; for unsigned types mask is the max.
	bits := uint(8 * d.Size())
	mask := uint64(math.MaxUint64) >> (64 - bits)
	hi := uint64(1) << (bits - 1)
	return []uint64{0, 1, 2, 3, mask, mask - 1, hi, hi - 1, hi + 1, hi - 2, 0x5555555555555555 & mask, 0xa5a5a5a5a5a5a5a5 & mask}
}

// moderate returns the bits of a value of d of ordinary size, so that sums
// and products of two are neither overflowing nor absorbed, and rounding
// to the 16-bit formats lands between representable values.
func moderate(d coll.Dtype, rng *rand.Rand) uint64 {
	v := rng.NormFloat64() * math.Ldexp(1, rng.IntN(17)-8)
	switch d {
	case coll.Float16:
		return uint64(reduce.Float32ToHalf(float32(v)))
	case coll.Bfloat16:
		return uint64(reduce.Float32ToBFloat16(float32(v)))
	case coll.Float32:
		return uint64(math.Float32bits(float32(v)))
	case coll.Float64:
		return math.Float64bits(v)
	}
	return uint64(int64(rng.IntN(201) - 100))
}

// values returns n element bit patterns of d drawn by one of three
// generators: raw random bits, moderate values, or a mix of moderate
// values, zeros and specials.
func values(d coll.Dtype, rng *rand.Rand, n int, gen int) []uint64 {
	sp := specials(d)
	out := make([]uint64, n)
	for i := range out {
		switch gen {
		case 0:
			out[i] = rng.Uint64()
		case 1:
			out[i] = moderate(d, rng)
		default:
			switch r := rng.IntN(8); {
			case r < 2:
				out[i] = sp[rng.IntN(len(sp))]
			case r == 2:
				out[i] = 0
			default:
				out[i] = moderate(d, rng)
			}
		}
	}
	return out
}

// pairs calls f for every valid (dtype, op) pair in a subtest.
func pairs(t *testing.T, f func(t *testing.T, d coll.Dtype, o coll.Op)) {
	for _, d := range coll.Dtypes {
		for _, o := range coll.Ops {
			if !coll.Supports(o, d) {
				continue
			}
			t.Run(fmt.Sprintf("%v/%v", d, o), func(t *testing.T) { f(t, d, o) })
		}
	}
}

// compare reduces copies of dst with src in Go and in C and requires the
// same bytes, reporting the first differing element. It returns Go's
// result.
func compare(t *testing.T, d coll.Dtype, o coll.Op, dst, src []byte, what string) []byte {
	t.Helper()
	want, got := buffer(len(dst)), buffer(len(dst))
	copy(want, dst)
	copy(got, dst)
	require.NoError(t, reduce.Into(d, o, want, src), what)
	require.NoError(t, cexec.Reduce(got, src, d, o), what)
	if !bytes.Equal(want, got) {
		n, first := 0, -1
		for i := 0; i < len(dst)/d.Size(); i++ {
			if get(d, want, i) != get(d, got, i) {
				if first < 0 {
					first = i
				}
				n++
			}
		}
		t.Fatalf("%v/%v %s: %d of %d elements differ; first %d: dst %#x src %#x: exec/reduce %#x, cexec %#x",
			d, o, what, n, len(dst)/d.Size(), first, get(d, dst, first), get(d, src, first), get(d, want, first), get(d, got, first))
	}
	return want
}

// Every special value against every special value, as one buffer of
// len(specials)^2 elements (long enough for the vector blocks).
func TestSpecialsAllCombinations(t *testing.T) {
	pairs(t, func(t *testing.T, d coll.Dtype, o coll.Op) {
		sp := specials(d)
		var dv, sv []uint64
		for _, x := range sp {
			for _, y := range sp {
				dv = append(dv, x)
				sv = append(sv, y)
			}
		}
		dst, src := encode(d, dv), encode(d, sv)
		want := compare(t, d, o, dst, src, "specials")
		// The reduction changed something: the comparison above is not
		// between two untouched copies.
		require.NotEqual(t, dst, want)
	})
}

func TestRandom(t *testing.T) {
	pairs(t, func(t *testing.T, d coll.Dtype, o coll.Op) {
		rng := rand.New(rand.NewPCG(uint64(d), uint64(o)))
		for _, n := range []int{0, 1, 3, 17, 1000} {
			for gen := 0; gen < 3; gen++ {
				dst := encode(d, values(d, rng, n, gen))
				src := encode(d, values(d, rng, n, gen))
				compare(t, d, o, dst, src, fmt.Sprintf("%d elements, generator %d", n, gen))
			}
		}
	})
}

// dst and src the same buffer: both implementations read each element
// before writing it.
func TestAliased(t *testing.T) {
	pairs(t, func(t *testing.T, d coll.Dtype, o coll.Op) {
		rng := rand.New(rand.NewPCG(7, uint64(d)<<8|uint64(o)))
		vals := append(values(d, rng, 100, 2), specials(d)...)
		want, got := encode(d, vals), encode(d, vals)
		require.NoError(t, reduce.Into(d, o, want, want))
		require.NoError(t, cexec.Reduce(got, got, d, o))
		require.Equal(t, want, got)
	})
}

// Every float16 / bfloat16 bit pattern as dst, against specials and random
// patterns as src.
func TestHalfAllPatterns(t *testing.T) {
	for _, d := range []coll.Dtype{coll.Float16, coll.Bfloat16} {
		rng := rand.New(rand.NewPCG(3, uint64(d)))
		srcs := specials(d)
		for len(srcs) < 64 {
			srcs = append(srcs, uint64(rng.Uint32()&0xffff))
		}
		dst := buffer(2 << 16)
		for p := 0; p < 1<<16; p++ {
			put(d, dst, p, uint64(p))
		}
		src := buffer(2 << 16)
		for _, o := range coll.Ops {
			if !coll.Supports(o, d) {
				continue
			}
			t.Run(fmt.Sprintf("%v/%v", d, o), func(t *testing.T) {
				for _, y := range srcs {
					for p := 0; p < 1<<16; p++ {
						put(d, src, p, y)
					}
					compare(t, d, o, dst, src, fmt.Sprintf("all patterns, src %#04x", y))
				}
			})
		}
	}
}

// The C table has a kernel exactly for the pairs coll.Supports accepts,
// out-of-range values included.
func TestKernelTable(t *testing.T) {
	for d := 0; d < 256; d++ {
		for o := 0; o < 256; o++ {
			require.Equal(t, coll.Supports(coll.Op(o), coll.Dtype(d)), cexec.HasKernel(coll.Dtype(d), coll.Op(o)), "dtype %d op %d", d, o)
		}
	}
}

func TestInvalidPairs(t *testing.T) {
	for _, c := range []struct {
		d    coll.Dtype
		o    coll.Op
		text []string
	}{
		{coll.Float32, coll.Band, []string{"float32", "band", "bitwise"}},
		{coll.Float16, coll.Bxor, []string{"float16", "bxor"}},
		{coll.DtypeInvalid, coll.Sum, []string{"dtype(0)", "sum"}},
		{coll.Int32, coll.OpInvalid, []string{"int32", "op(0)"}},
		{coll.Int32, coll.Op(10), []string{"int32", "op(10)"}},
		{coll.Dtype(13), coll.Max, []string{"dtype(13)", "max"}},
	} {
		for _, n := range []int{0, 8} {
			dst, src := buffer(n), buffer(n)
			err := cexec.Reduce(dst, src, c.d, c.o)
			require.Error(t, err, "%v/%v", c.d, c.o)
			for _, s := range c.text {
				require.Contains(t, err.Error(), s)
			}
			require.Error(t, reduce.Into(c.d, c.o, dst, src), "the reference agrees")
		}
	}
}

func TestBadBuffers(t *testing.T) {
	buf := buffer(64)
	for _, c := range []struct {
		name     string
		d        coll.Dtype
		dst, src []byte
	}{
		{"lengths differ", coll.Float32, buf[:8], buf[8:12]},
		{"dst longer", coll.Int8, buf[:3], buf[8:10]},
		{"partial element", coll.Float32, buf[:6], buf[8:14]},
		{"partial int64", coll.Int64, buf[:12], buf[16:28]},
		{"misaligned dst", coll.Float32, buf[1:5], buf[8:12]},
		{"misaligned src", coll.Float64, buf[:8], buf[12:20]},
		{"misaligned float16", coll.Float16, buf[:2], buf[9:11]},
	} {
		before := append([]byte(nil), buf...)
		require.Error(t, cexec.Reduce(c.dst, c.src, c.d, coll.Sum), c.name)
		require.Error(t, reduce.Into(c.d, coll.Sum, c.dst, c.src), "%s: the reference agrees", c.name)
		require.Equal(t, before, buf, "%s: nothing written", c.name)
	}
	require.NoError(t, cexec.Reduce(nil, nil, coll.Float32, coll.Sum), "empty buffers are fine")
}

func BenchmarkFloat32Sum(b *testing.B) {
	for _, size := range []int{4, 4 << 10, 1 << 20} {
		dst, src := buffer(size), buffer(size)
		for i := 0; i < size/4; i++ {
			put(coll.Float32, src, i, uint64(math.Float32bits(float32(i))))
		}
		b.Run(fmt.Sprintf("cexec/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				_ = cexec.Reduce(dst, src, coll.Float32, coll.Sum)
			}
		})
		b.Run(fmt.Sprintf("reduce/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				_ = reduce.Into(coll.Float32, coll.Sum, dst, src)
			}
		})
	}
}
