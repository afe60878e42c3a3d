package reduce

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// refHalfValue decodes binary16 bits field by field with math.Ldexp, an
// independent path from HalfToFloat32's bit shuffling.
func refHalfValue(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	mant := float64(h & 0x3ff)
	switch exp {
	case 0x1f:
		if mant == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	case 0:
		return sign * math.Ldexp(mant, -24)
	}
	return sign * math.Ldexp(1024+mant, exp-25)
}

// refBF16Value decodes bfloat16 bits field by field.
func refBF16Value(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>7) & 0xff
	mant := float64(h & 0x7f)
	switch exp {
	case 0xff:
		if mant == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	case 0:
		return sign * math.Ldexp(mant, -133)
	}
	return sign * math.Ldexp(128+mant, exp-134)
}

// ladder is the increasing list of non-negative finite values of a 16-bit
// format, indexed by bit pattern, followed by the value the infinity
// pattern stands for when rounding (the next power of two past the largest
// finite value). Positive patterns are ordered like their values.
type ladder struct {
	vals []float64
}

func newLadder(decode func(uint16) float64, infBits uint16, infAs float64) ladder {
	v := make([]float64, int(infBits)+1)
	for p := 0; p < int(infBits); p++ {
		v[p] = decode(uint16(p))
	}
	v[infBits] = infAs
	return ladder{v}
}

// round is the reference round-to-nearest-even of x: find the two
// neighbours on the ladder, compare the distances (exact in float64 here,
// by Sterbenz's lemma), on a tie pick the even pattern.
func (l ladder) round(x float64) uint16 {
	var sign uint16
	if math.Signbit(x) {
		sign, x = 0x8000, -x
	}
	last := len(l.vals) - 1
	if x >= l.vals[last] {
		return sign | uint16(last)
	}
	i := sort.Search(len(l.vals), func(k int) bool { return l.vals[k] > x }) - 1
	if l.vals[i] == x {
		return sign | uint16(i)
	}
	d1, d2 := x-l.vals[i], l.vals[i+1]-x
	switch {
	case d1 < d2:
		return sign | uint16(i)
	case d2 < d1:
		return sign | uint16(i+1)
	}
	if i%2 == 0 {
		return sign | uint16(i)
	}
	return sign | uint16(i+1)
}

var (
	halfLadder = newLadder(refHalfValue, 0x7c00, 65536)
	bf16Ladder = newLadder(refBF16Value, 0x7f80, math.Ldexp(1, 128))
)

// probes returns float32 values around and between the 16-bit value lo and
// the next one, hi: both ends, the exact midpoint, one float32 ulp either
// side of it and of both ends, and a few random values in between.
func probes(rng *rand.Rand, lo, hi float64, out []float32) []float32 {
	out = out[:0]
	mid := (lo + hi) / 2
	for _, v := range []float64{lo, hi, mid} {
		f := float32(v) // exact: 16-bit values and their midpoints fit a float32
		out = append(out, f, math.Nextafter32(f, float32(math.Inf(1))), math.Nextafter32(f, 0))
	}
	for k := 0; k < 4; k++ {
		out = append(out, float32(lo+(hi-lo)*rng.Float64()))
	}
	return out
}

func TestHalfToFloat32AllPatterns(t *testing.T) {
	for p := 0; p < 1<<16; p++ {
		h := uint16(p)
		got := HalfToFloat32(h)
		want := refHalfValue(h)
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(float64(got)), "pattern %#04x", h)
			require.Equal(t, h&0x8000 != 0, math.Signbit(float64(got)), "NaN sign of %#04x", h)
			continue
		}
		require.Equal(t, want, float64(got), "pattern %#04x", h)
		require.Equal(t, math.Signbit(want), math.Signbit(float64(got)), "sign of %#04x", h)
	}
}

func TestBFloat16ToFloat32AllPatterns(t *testing.T) {
	for p := 0; p < 1<<16; p++ {
		h := uint16(p)
		got := BFloat16ToFloat32(h)
		want := refBF16Value(h)
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(float64(got)), "pattern %#04x", h)
			continue
		}
		require.Equal(t, want, float64(got), "pattern %#04x", h)
		require.Equal(t, math.Signbit(want), math.Signbit(float64(got)), "sign of %#04x", h)
	}
}

// Every pattern round-trips, and every float32 probed around and between
// consecutive patterns rounds like the reference.
func TestFloat32ToHalfRounding(t *testing.T) {
	testNarrowing(t, "float16", halfLadder, HalfToFloat32, Float32ToHalf, 0x7c00)
}

func TestFloat32ToBFloat16Rounding(t *testing.T) {
	testNarrowing(t, "bfloat16", bf16Ladder, BFloat16ToFloat32, Float32ToBFloat16, 0x7f80)
}

func testNarrowing(t *testing.T, name string, l ladder, widen func(uint16) float32, narrow func(float32) uint16, inf uint16) {
	rng := rand.New(rand.NewPCG(1, 2))
	var buf []float32
	for p := 0; p < 1<<16; p++ {
		h := uint16(p)
		if h&0x7fff > inf { // NaN patterns: checked below
			got := narrow(widen(h))
			require.True(t, math.IsNaN(float64(widen(got))), "%s NaN %#04x narrowed to %#04x", name, h, got)
			require.Equal(t, h&0x8000, got&0x8000, "%s NaN sign %#04x", name, h)
			continue
		}
		require.Equal(t, h, narrow(widen(h)), "%s round trip %#04x", name, h)
		if h&0x7fff == inf {
			continue
		}
		// Probe between this pattern and the next of larger magnitude.
		lo, hi := l.vals[h&0x7fff], l.vals[h&0x7fff+1]
		buf = probes(rng, lo, hi, buf)
		for _, x := range buf {
			if h&0x8000 != 0 {
				x = -x
			}
			if math.IsInf(float64(x), 0) {
				continue
			}
			require.Equal(t, l.round(float64(x)), narrow(x), "%s of %g (%#08x)", name, x, math.Float32bits(x))
		}
	}
	// Float32 values beyond the format: huge finite values, infinities,
	// the smallest float32 subnormals.
	for _, x := range []float32{math.MaxFloat32, -math.MaxFloat32, 1e30, 65519.996, 65520, 65536,
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1e-30} {
		require.Equal(t, l.round(float64(x)), narrow(x), "%s of %g", name, x)
	}
	require.Equal(t, inf, narrow(float32(math.Inf(1))))
	require.Equal(t, inf|0x8000, narrow(float32(math.Inf(-1))))
	nan := narrow(float32(math.NaN()))
	require.True(t, math.IsNaN(float64(widen(nan))), "%s NaN -> %#04x", name, nan)
	// A NaN whose payload lives only in the low bits stays NaN.
	low := narrow(math.Float32frombits(0x7f800001))
	require.True(t, math.IsNaN(float64(widen(low))), "%s low-payload NaN -> %#04x", name, low)
}
