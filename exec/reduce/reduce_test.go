package reduce

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goring-hpc/goring/coll"
	"github.com/stretchr/testify/require"
)

// The reference works one element at a time in the widest type (int64,
// uint64 or float64) and narrows the result with plain conversions, which
// gives wraparound for integers and a single rounding for float32 (a sum or
// product of two float32 values is exact in float64 for the data below).

func decodeInt(d coll.Dtype, b []byte) int64 {
	switch d.Size() {
	case 1:
		return int64(int8(b[0]))
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(b)))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(b)))
	}
	return int64(binary.LittleEndian.Uint64(b))
}

func decodeUint(d coll.Dtype, b []byte) uint64 {
	switch d.Size() {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

func encodeUint(d coll.Dtype, b []byte, v uint64) {
	switch d.Size() {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}

func decodeFloat(d coll.Dtype, b []byte) float64 {
	switch d {
	case coll.Float16:
		return refHalfValue(binary.LittleEndian.Uint16(b))
	case coll.Bfloat16:
		return refBF16Value(binary.LittleEndian.Uint16(b))
	case coll.Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

func encodeFloat(d coll.Dtype, b []byte, v float64) {
	switch {
	case math.IsNaN(v) && d == coll.Float16:
		binary.LittleEndian.PutUint16(b, 0x7e00)
	case math.IsNaN(v) && d == coll.Bfloat16:
		binary.LittleEndian.PutUint16(b, 0x7fc0)
	case d == coll.Float16:
		binary.LittleEndian.PutUint16(b, halfLadder.round(v))
	case d == coll.Bfloat16:
		binary.LittleEndian.PutUint16(b, bf16Ladder.round(v))
	case d == coll.Float32:
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v)))
	default:
		binary.LittleEndian.PutUint64(b, math.Float64bits(v))
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func refFloat(o coll.Op, a, b float64) float64 {
	switch o {
	case coll.Sum:
		return a + b
	case coll.Prod:
		return a * b
	case coll.Min, coll.Max:
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		if a == b { // equal, or +0 and -0: min takes the negative zero
			if (o == coll.Min) == math.Signbit(a) {
				return a
			}
			return b
		}
		if (a < b) == (o == coll.Min) {
			return a
		}
		return b
	case coll.Land:
		return float64(b2i(a != 0 && b != 0))
	case coll.Lor:
		return float64(b2i(a != 0 || b != 0))
	}
	panic(o)
}

func refInt(o coll.Op, a, b int64) int64 {
	switch o {
	case coll.Sum:
		return a + b
	case coll.Prod:
		return a * b
	case coll.Min:
		return min(a, b)
	case coll.Max:
		return max(a, b)
	case coll.Land:
		return b2i(a != 0 && b != 0)
	case coll.Lor:
		return b2i(a != 0 || b != 0)
	case coll.Band:
		return a & b
	case coll.Bor:
		return a | b
	case coll.Bxor:
		return a ^ b
	}
	panic(o)
}

func refUint(o coll.Op, a, b uint64) uint64 {
	switch o {
	case coll.Sum:
		return a + b
	case coll.Prod:
		return a * b
	case coll.Min:
		return min(a, b)
	case coll.Max:
		return max(a, b)
	case coll.Land:
		return uint64(b2i(a != 0 && b != 0))
	case coll.Lor:
		return uint64(b2i(a != 0 || b != 0))
	case coll.Band:
		return a & b
	case coll.Bor:
		return a | b
	case coll.Bxor:
		return a ^ b
	}
	panic(o)
}

func isSigned(d coll.Dtype) bool {
	return d == coll.Int8 || d == coll.Int16 || d == coll.Int32 || d == coll.Int64
}

// Reference reduces element by element.
func Reference(d coll.Dtype, o coll.Op, dst, src []byte) {
	size := d.Size()
	for i := 0; i+size <= len(dst); i += size {
		a, b := dst[i:i+size], src[i:i+size]
		switch {
		case d.IsFloat():
			encodeFloat(d, a, refFloat(o, decodeFloat(d, a), decodeFloat(d, b)))
		case isSigned(d):
			encodeUint(d, a, uint64(refInt(o, decodeInt(d, a), decodeInt(d, b))))
		default:
			encodeUint(d, a, refUint(o, decodeUint(d, a), decodeUint(d, b)))
		}
	}
}

// randomData fills n elements of d. Integers get random bits, with many
// zeros and ones so logical ops see both truth values. Floats get small
// signed values over a few binades (so a float32 sum of two half values is
// exact and the half kernels' double rounding cannot show), zeros of both
// signs, and an occasional NaN or infinity.
func randomData(rng *rand.Rand, d coll.Dtype, n int) []byte {
	size := d.Size()
	b := make([]byte, n*size)
	for i := 0; i < n; i++ {
		e := b[i*size : (i+1)*size]
		r := rng.IntN(16)
		if !d.IsFloat() {
			switch r {
			case 0:
				encodeUint(d, e, 0)
			case 1:
				encodeUint(d, e, 1)
			default:
				encodeUint(d, e, rng.Uint64())
			}
			continue
		}
		var v float64
		switch r {
		case 0:
			v = 0
		case 1:
			v = math.Copysign(0, -1)
		case 2:
			v = math.NaN()
		case 3:
			v = math.Inf(1 - 2*rng.IntN(2))
		default:
			v = float64(rng.IntN(2001)-1000) / 64 // -15.6 .. 15.6 in steps of 1/64
		}
		encodeFloat(d, e, v)
	}
	return b
}

// sameBits compares two buffers, treating any two NaNs of a float type as
// equal (payloads are not specified beyond "stays NaN").
func sameBits(t *testing.T, d coll.Dtype, want, got []byte, msg string) {
	t.Helper()
	size := d.Size()
	for i := 0; i < len(want); i += size {
		w, g := want[i:i+size], got[i:i+size]
		if d.IsFloat() && math.IsNaN(decodeFloat(d, w)) && math.IsNaN(decodeFloat(d, g)) {
			continue
		}
		require.Equal(t, w, g, "%s: element %d", msg, i/size)
	}
}

func TestKernelsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, d := range coll.Dtypes {
		for _, o := range coll.Ops {
			name := fmt.Sprintf("%v/%v", d, o)
			f, err := Kernel(d, o)
			if o.Bitwise() && d.IsFloat() {
				require.Error(t, err, name)
				require.Contains(t, err.Error(), "integer", name)
				continue
			}
			require.NoError(t, err, name)
			for _, n := range []int{0, 1, 7, 255, 259, 1000} {
				dst := randomData(rng, d, n)
				src := randomData(rng, d, n)
				want := append([]byte(nil), dst...)
				Reference(d, o, want, src)
				srcCopy := append([]byte(nil), src...)
				f(dst, src)
				sameBits(t, d, want, dst, fmt.Sprintf("%s n=%d", name, n))
				require.True(t, bytes.Equal(srcCopy, src), "%s: src modified", name)
			}
		}
	}
}

func TestKernelErrors(t *testing.T) {
	cases := []struct {
		d    coll.Dtype
		o    coll.Op
		want string
	}{
		{coll.DtypeInvalid, coll.Sum, "invalid dtype"},
		{coll.Float32, coll.OpInvalid, "invalid op"},
		{coll.Float32, coll.Band, "bitwise"},
		{coll.Float16, coll.Bxor, "bitwise"},
		{coll.Bfloat16, coll.Bor, "bitwise"},
		{coll.Float64, coll.Bor, "bitwise"},
	}
	for i, c := range cases {
		_, err := Kernel(c.d, c.o)
		require.ErrorContains(t, err, c.want, "case %d", i)
	}
}

func TestIntoChecks(t *testing.T) {
	buf := make([]byte, 64)
	cases := []struct {
		d        coll.Dtype
		dst, src []byte
		want     string
	}{
		{coll.Float32, buf[0:8], buf[8:12], "dst has 8 bytes, src 4"},
		{coll.Float32, buf[0:6], buf[8:14], "whole number"},
		{coll.Float32, buf[1:5], buf[8:12], "aligned"},
		{coll.Int64, buf[0:8], buf[12:20], "aligned"},
		{coll.Int8, buf[1:4], buf[5:8], ""},
		{coll.Float32, buf[0:0], buf[1:1], ""},
	}
	for i, c := range cases {
		err := Into(c.d, coll.Sum, c.dst, c.src)
		if c.want == "" {
			require.NoError(t, err, "case %d", i)
		} else {
			require.ErrorContains(t, err, c.want, "case %d", i)
		}
	}
}

func TestKernelAllocatesNothing(t *testing.T) {
	dst, src := make([]byte, 4096), make([]byte, 4096)
	for _, d := range []coll.Dtype{coll.Float32, coll.Float16, coll.Int8} {
		f, err := Kernel(d, coll.Sum)
		require.NoError(t, err)
		require.Zero(t, testing.AllocsPerRun(20, func() { f(dst, src) }), "%v", d)
	}
}

// BenchmarkReduce reports throughput as bytes of dst reduced per second
// (the GB/s column; MB/s is the same figure from SetBytes). The data are
// the test's random values; iterations alternate between src and its
// negation so that sums stay in range and never turn into infinities
// (which would exercise only the half types' slow rounding path).
func BenchmarkReduce(b *testing.B) {
	for _, c := range []struct {
		d     coll.Dtype
		o     coll.Op
		bytes int
	}{
		{coll.Float32, coll.Sum, 64 << 10},
		{coll.Float32, coll.Sum, 4 << 20},
		{coll.Float64, coll.Sum, 4 << 20},
		{coll.Int32, coll.Bxor, 4 << 20},
		{coll.Float16, coll.Sum, 4 << 20},
		{coll.Bfloat16, coll.Sum, 4 << 20},
	} {
		b.Run(fmt.Sprintf("%v/%v/%dKiB", c.d, c.o, c.bytes>>10), func(b *testing.B) {
			f, err := Kernel(c.d, c.o)
			require.NoError(b, err)
			rng := rand.New(rand.NewPCG(1, 1))
			n := c.bytes / c.d.Size()
			dst := finite(c.d, randomData(rng, c.d, n))
			pos := finite(c.d, randomData(rng, c.d, n))
			neg := append([]byte(nil), pos...)
			if c.d.IsFloat() {
				for i := c.d.Size() - 1; i < len(neg); i += c.d.Size() {
					neg[i] ^= 0x80 // flip the sign bit (little-endian: top byte)
				}
			}
			srcs := [2][]byte{pos, neg}
			b.SetBytes(int64(c.bytes))
			b.ReportAllocs()
			b.ResetTimer()
			k := 0
			for b.Loop() {
				f(dst, srcs[k&1])
				k++
			}
			b.ReportMetric(float64(c.bytes)*float64(k)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// finite replaces NaNs and infinities with 1 so a benchmark measures the
// common path.
func finite(d coll.Dtype, b []byte) []byte {
	if !d.IsFloat() {
		return b
	}
	size := d.Size()
	for i := 0; i < len(b); i += size {
		if v := decodeFloat(d, b[i:i+size]); math.IsNaN(v) || math.IsInf(v, 0) {
			encodeFloat(d, b[i:i+size], 1)
		}
	}
	return b
}
