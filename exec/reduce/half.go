package reduce

import (
	"math"
	"sync"
)

// HalfToFloat32 widens an IEEE 754 binary16 value, given as its bits, to
// float32. Every float16 value is exactly representable as a float32.
func HalfToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // Inf or NaN: keep the payload in the top bits
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0: // normal: rebias 15 -> 127
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal half: mant * 2^-24. Normalise: shift the leading one up to
	// bit 10 and lower the exponent by the shift.
	e := uint32(127 - 15 + 1)
	for mant&0x400 == 0 {
		mant <<= 1
		e--
	}
	return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
}

// Float32ToHalf narrows f to IEEE 754 binary16 bits, rounding to nearest,
// ties to even. Overflow gives ±Inf; NaN stays NaN (quiet, sign and top
// payload bits kept).
//
// The common case, a result in the normal half range, is a few integer
// operations the compiler inlines; the rest takes the general path.
func Float32ToHalf(f float32) uint16 {
	if h, ok := halfFast(f); ok {
		return h
	}
	return float32ToHalfSlow(math.Float32bits(f))
}

// halfFast narrows f when the result is a normal half (biased exponent
// 1..30), the common case, in a few integer operations the compiler
// inlines. It rebiases the exponent (127 -> 15) with the mantissa shifted
// into place, then rounds on the 13 dropped bits: adding 0xfff plus the
// kept lsb carries exactly when they are above half, or a tie with an odd
// lsb. A carry out of the mantissa bumps the exponent, up to Inf.
func halfFast(f float32) (uint16, bool) {
	b := math.Float32bits(f)
	if (b>>23)&0xff-113 >= 30 {
		return 0, false
	}
	v := (b&0x7fffffff)>>13 - (127-15)<<10
	return uint16(b>>16)&0x8000 | uint16(v+(b&0x1fff+0xfff+v&1)>>13), true
}

func float32ToHalfSlow(b uint32) uint16 {
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant == 0 {
			return sign | 0x7c00
		}
		return sign | 0x7e00 | uint16(mant>>13)
	}
	// Unbiased exponent, then the half's biased exponent.
	he := exp - 127 + 15
	if he >= 0x1f {
		return sign | 0x7c00
	}
	if he <= 0 {
		// Result is subnormal (or zero) in half: value = m * 2^-24 with
		// m = (1.mant) * 2^(exp-127+24). Shift the 24-bit significand right.
		if he < -10 {
			// Below half the smallest subnormal (2^-25): rounds to zero.
			// exactly 2^-25 has he == -10 and is handled below (tie -> 0).
			return sign
		}
		sig := mant | 0x800000
		shift := uint32(14 - he) // 13 for the mantissa width gap, +1-he for the scale
		return sign | roundShift(sig, shift)
	}
	// Normal: keep 10 mantissa bits, round on the 13 dropped bits. A carry
	// out of the mantissa correctly bumps the exponent (up to Inf).
	v := uint32(he)<<10 | mant>>13
	return sign | uint16(v+roundBit(mant, 13, v))
}

// roundShift returns sig >> shift rounded to nearest even.
func roundShift(sig, shift uint32) uint16 {
	v := sig >> shift
	return uint16(v + roundBit(sig, shift, v))
}

// roundBit decides the rounding increment when the low `shift` bits of x
// are dropped and kept is what remains: 1 above half, 0 below half, and on
// an exact half the increment that makes kept even.
func roundBit(x, shift, kept uint32) uint32 {
	rem := x & (1<<shift - 1)
	half := uint32(1) << (shift - 1)
	switch {
	case rem > half:
		return 1
	case rem < half:
		return 0
	}
	return kept & 1
}

// BFloat16ToFloat32 widens a bfloat16 value (the top half of a float32).
func BFloat16ToFloat32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}

// Float32ToBFloat16 narrows f to bfloat16 bits, rounding to nearest, ties
// to even. NaN stays NaN (quiet bit set, sign and top payload bits kept).
func Float32ToBFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7f800000 == 0x7f800000 && b&0x7fffff != 0 {
		return uint16(b>>16) | 0x0040
	}
	kept := b >> 16
	return uint16(kept + (b&0xffff+0x7fff+kept&1)>>16)
}

// halfTable widens every float16 pattern; the float16 kernels look values
// up instead of decoding them. Built on first use (256 KiB).
var (
	halfTable     *[1 << 16]float32
	halfTableOnce sync.Once
)

func widenTable() *[1 << 16]float32 {
	halfTableOnce.Do(func() {
		t := new([1 << 16]float32)
		for i := range t {
			t[i] = HalfToFloat32(uint16(i))
		}
		halfTable = t
	})
	return halfTable
}
