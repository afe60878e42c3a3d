// ops.cuh: the element-wise operators goring reduces with, shared by
// reduce.cu (pairwise and multi reductions) and node.cu (the collectives
// of a node's GPUs), so both give the host's bits (package exec/reduce):
// integers wrap on overflow; float16 and bfloat16 are widened to float32,
// combined there and rounded back to nearest-even; min and max order -0
// below +0; logical ops give 1 or 0 in the element's own type.
#ifndef GORING_OPS_CUH
#define GORING_OPS_CUH
#include <stdint.h>

namespace {

// Bit patterns of the float16 and bfloat16 formats.
struct half_bits {
    uint16_t v;
};
struct bf16_bits {
    uint16_t v;
};

__device__ __forceinline__ float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp  = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0x1f) return __uint_as_float(sign | 0x7f800000u | mant << 13);
    if (exp != 0) return __uint_as_float(sign | (exp + 112) << 23 | mant << 13);
    if (mant == 0) return __uint_as_float(sign);
    // Subnormal: normalise the mantissa, lowering the exponent.
    uint32_t e = 113;
    while ((mant & 0x400) == 0) {
        mant <<= 1;
        e--;
    }
    return __uint_as_float(sign | e << 23 | (mant & 0x3ff) << 13);
}

// round_bit: the increment when the low shift bits of x are dropped and
// kept remains: 1 above half, 0 below, on a tie the one that makes kept even.
__device__ __forceinline__ uint32_t round_bit(uint32_t x, uint32_t shift, uint32_t kept)
{
    uint32_t rem  = x & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half) return 1;
    if (rem < half) return 0;
    return kept & 1;
}

__device__ __forceinline__ uint16_t float_to_half(float f)
{
    uint32_t b    = __float_as_uint(f);
    uint16_t sign = (uint16_t)(b >> 16) & 0x8000;
    int32_t  exp  = (b >> 23) & 0xff;
    uint32_t mant = b & 0x7fffff;
    if (exp == 0xff) return mant == 0 ? (sign | 0x7c00) : (sign | 0x7e00 | (uint16_t)(mant >> 13));
    int32_t he = exp - 127 + 15;
    if (he >= 0x1f) return sign | 0x7c00;
    if (he <= 0) {
        if (he < -10) return sign;
        uint32_t sig   = mant | 0x800000;
        uint32_t shift = (uint32_t)(14 - he);
        uint32_t v     = sig >> shift;
        return sign | (uint16_t)(v + round_bit(sig, shift, v));
    }
    uint32_t v = (uint32_t)he << 10 | mant >> 13;
    return sign | (uint16_t)(v + round_bit(mant, 13, v));
}

__device__ __forceinline__ float bf16_to_float(uint16_t h) { return __uint_as_float((uint32_t)h << 16); }

__device__ __forceinline__ uint16_t float_to_bf16(float f)
{
    uint32_t b = __float_as_uint(f);
    if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffff) != 0) return (uint16_t)(b >> 16) | 0x0040;
    uint32_t kept = b >> 16;
    return (uint16_t)(kept + (((b & 0xffff) + 0x7fff + (kept & 1)) >> 16));
}

// Floating min and max as the host computes them: NaN wins, and of two
// zeros min is -0 and max +0.
template <typename F> __device__ __forceinline__ F fmin_exact(F x, F y)
{
    if (x != x) return x;
    if (y != y) return y;
    if (x < y) return x;
    if (y < x) return y;
    return signbit(x) ? x : y;
}
template <typename F> __device__ __forceinline__ F fmax_exact(F x, F y)
{
    if (x != x) return x;
    if (y != y) return y;
    if (x > y) return x;
    if (y > x) return y;
    return signbit(x) ? y : x;
}

// The same-width unsigned type, for wrapping arithmetic on signed ints.
template <typename T> struct uns;
template <> struct uns<int8_t> { typedef uint8_t t; };
template <> struct uns<int16_t> { typedef uint16_t t; };
template <> struct uns<int32_t> { typedef uint32_t t; };
template <> struct uns<int64_t> { typedef uint64_t t; };
template <> struct uns<uint8_t> { typedef uint8_t t; };
template <> struct uns<uint16_t> { typedef uint16_t t; };
template <> struct uns<uint32_t> { typedef uint32_t t; };
template <> struct uns<uint64_t> { typedef uint64_t t; };

// Ops on integers.
template <typename T> struct isum {
    __device__ T operator()(T a, T b) const { return (T)((typename uns<T>::t)a + (typename uns<T>::t)b); }
};
template <typename T> struct iprod {
    __device__ T operator()(T a, T b) const { return (T)((typename uns<T>::t)a * (typename uns<T>::t)b); }
};
template <typename T> struct imin {
    __device__ T operator()(T a, T b) const { return a < b ? a : b; }
};
template <typename T> struct imax {
    __device__ T operator()(T a, T b) const { return a > b ? a : b; }
};
template <typename T> struct land {
    __device__ T operator()(T a, T b) const { return (a != 0 && b != 0) ? (T)1 : (T)0; }
};
template <typename T> struct lor {
    __device__ T operator()(T a, T b) const { return (a != 0 || b != 0) ? (T)1 : (T)0; }
};
template <typename T> struct band {
    __device__ T operator()(T a, T b) const { return a & b; }
};
template <typename T> struct bor {
    __device__ T operator()(T a, T b) const { return a | b; }
};
template <typename T> struct bxor {
    __device__ T operator()(T a, T b) const { return a ^ b; }
};

// Ops on float and double (no contraction: one operation per element).
template <typename T> struct fsum {
    __device__ T operator()(T a, T b) const { return a + b; }
};
template <typename T> struct fprod {
    __device__ T operator()(T a, T b) const { return a * b; }
};
template <typename T> struct fmin_op {
    __device__ T operator()(T a, T b) const { return fmin_exact(a, b); }
};
template <typename T> struct fmax_op {
    __device__ T operator()(T a, T b) const { return fmax_exact(a, b); }
};

// Ops on 16-bit floats, given as bits: widen, combine in float, narrow.
// Widen and Narrow pick the format.
struct as_half {
    __device__ static float widen(uint16_t h) { return half_to_float(h); }
    __device__ static uint16_t narrow(float f) { return float_to_half(f); }
    __device__ static bool truth(uint16_t h) { return half_to_float(h) != 0.0f; }
    static const uint16_t one = 0x3c00;
};
struct as_bf16 {
    __device__ static float widen(uint16_t h) { return bf16_to_float(h); }
    __device__ static uint16_t narrow(float f) { return float_to_bf16(f); }
    __device__ static bool truth(uint16_t h) { return (h & 0x7fff) != 0; }
    static const uint16_t one = 0x3f80;
};
template <typename Fmt> struct hsum {
    __device__ uint16_t operator()(uint16_t a, uint16_t b) const { return Fmt::narrow(Fmt::widen(a) + Fmt::widen(b)); }
};
template <typename Fmt> struct hprod {
    __device__ uint16_t operator()(uint16_t a, uint16_t b) const { return Fmt::narrow(Fmt::widen(a) * Fmt::widen(b)); }
};
template <typename Fmt> struct hmin {
    __device__ uint16_t operator()(uint16_t a, uint16_t b) const
    {
        return Fmt::narrow(fmin_exact(Fmt::widen(a), Fmt::widen(b)));
    }
};
template <typename Fmt> struct hmax {
    __device__ uint16_t operator()(uint16_t a, uint16_t b) const
    {
        return Fmt::narrow(fmax_exact(Fmt::widen(a), Fmt::widen(b)));
    }
};
template <typename Fmt> struct hland {
    __device__ uint16_t operator()(uint16_t a, uint16_t b) const { return (Fmt::truth(a) && Fmt::truth(b)) ? Fmt::one : 0; }
};
template <typename Fmt> struct hlor {
    __device__ uint16_t operator()(uint16_t a, uint16_t b) const { return (Fmt::truth(a) || Fmt::truth(b)) ? Fmt::one : 0; }
};

// 16 bytes as lanes of T, for the vector path.
template <typename T> union vec16 {
    uint4 raw;
    T     lane[16 / sizeof(T)];
};

// 8 bytes as lanes of T: the payload of one LL line (node.cu).
template <typename T> union vec8 {
    unsigned long long raw;
    T                  lane[8 / sizeof(T)];
};


} // namespace

// GORING_FOR_EACH_REDUCTION(X) expands X(name, T, Op) once for every
// (dtype, op) pair goring reduces (coll.Supports), name being
// <dtype>_<op> as package coll spells them; 16-bit floats are their bits.
#define GORING_FOR_EACH_REDUCTION(X) \
    X(int8_sum, int8_t, isum<int8_t>) \
    X(int8_prod, int8_t, iprod<int8_t>) \
    X(int8_min, int8_t, imin<int8_t>) \
    X(int8_max, int8_t, imax<int8_t>) \
    X(int8_land, int8_t, land<int8_t>) \
    X(int8_lor, int8_t, lor<int8_t>) \
    X(int8_band, int8_t, band<int8_t>) \
    X(int8_bor, int8_t, bor<int8_t>) \
    X(int8_bxor, int8_t, bxor<int8_t>) \
    X(int16_sum, int16_t, isum<int16_t>) \
    X(int16_prod, int16_t, iprod<int16_t>) \
    X(int16_min, int16_t, imin<int16_t>) \
    X(int16_max, int16_t, imax<int16_t>) \
    X(int16_land, int16_t, land<int16_t>) \
    X(int16_lor, int16_t, lor<int16_t>) \
    X(int16_band, int16_t, band<int16_t>) \
    X(int16_bor, int16_t, bor<int16_t>) \
    X(int16_bxor, int16_t, bxor<int16_t>) \
    X(int32_sum, int32_t, isum<int32_t>) \
    X(int32_prod, int32_t, iprod<int32_t>) \
    X(int32_min, int32_t, imin<int32_t>) \
    X(int32_max, int32_t, imax<int32_t>) \
    X(int32_land, int32_t, land<int32_t>) \
    X(int32_lor, int32_t, lor<int32_t>) \
    X(int32_band, int32_t, band<int32_t>) \
    X(int32_bor, int32_t, bor<int32_t>) \
    X(int32_bxor, int32_t, bxor<int32_t>) \
    X(int64_sum, int64_t, isum<int64_t>) \
    X(int64_prod, int64_t, iprod<int64_t>) \
    X(int64_min, int64_t, imin<int64_t>) \
    X(int64_max, int64_t, imax<int64_t>) \
    X(int64_land, int64_t, land<int64_t>) \
    X(int64_lor, int64_t, lor<int64_t>) \
    X(int64_band, int64_t, band<int64_t>) \
    X(int64_bor, int64_t, bor<int64_t>) \
    X(int64_bxor, int64_t, bxor<int64_t>) \
    X(uint8_sum, uint8_t, isum<uint8_t>) \
    X(uint8_prod, uint8_t, iprod<uint8_t>) \
    X(uint8_min, uint8_t, imin<uint8_t>) \
    X(uint8_max, uint8_t, imax<uint8_t>) \
    X(uint8_land, uint8_t, land<uint8_t>) \
    X(uint8_lor, uint8_t, lor<uint8_t>) \
    X(uint8_band, uint8_t, band<uint8_t>) \
    X(uint8_bor, uint8_t, bor<uint8_t>) \
    X(uint8_bxor, uint8_t, bxor<uint8_t>) \
    X(uint16_sum, uint16_t, isum<uint16_t>) \
    X(uint16_prod, uint16_t, iprod<uint16_t>) \
    X(uint16_min, uint16_t, imin<uint16_t>) \
    X(uint16_max, uint16_t, imax<uint16_t>) \
    X(uint16_land, uint16_t, land<uint16_t>) \
    X(uint16_lor, uint16_t, lor<uint16_t>) \
    X(uint16_band, uint16_t, band<uint16_t>) \
    X(uint16_bor, uint16_t, bor<uint16_t>) \
    X(uint16_bxor, uint16_t, bxor<uint16_t>) \
    X(uint32_sum, uint32_t, isum<uint32_t>) \
    X(uint32_prod, uint32_t, iprod<uint32_t>) \
    X(uint32_min, uint32_t, imin<uint32_t>) \
    X(uint32_max, uint32_t, imax<uint32_t>) \
    X(uint32_land, uint32_t, land<uint32_t>) \
    X(uint32_lor, uint32_t, lor<uint32_t>) \
    X(uint32_band, uint32_t, band<uint32_t>) \
    X(uint32_bor, uint32_t, bor<uint32_t>) \
    X(uint32_bxor, uint32_t, bxor<uint32_t>) \
    X(uint64_sum, uint64_t, isum<uint64_t>) \
    X(uint64_prod, uint64_t, iprod<uint64_t>) \
    X(uint64_min, uint64_t, imin<uint64_t>) \
    X(uint64_max, uint64_t, imax<uint64_t>) \
    X(uint64_land, uint64_t, land<uint64_t>) \
    X(uint64_lor, uint64_t, lor<uint64_t>) \
    X(uint64_band, uint64_t, band<uint64_t>) \
    X(uint64_bor, uint64_t, bor<uint64_t>) \
    X(uint64_bxor, uint64_t, bxor<uint64_t>) \
    X(float32_sum, float, fsum<float>) \
    X(float32_prod, float, fprod<float>) \
    X(float32_min, float, fmin_op<float>) \
    X(float32_max, float, fmax_op<float>) \
    X(float32_land, float, land<float>) \
    X(float32_lor, float, lor<float>) \
    X(float64_sum, double, fsum<double>) \
    X(float64_prod, double, fprod<double>) \
    X(float64_min, double, fmin_op<double>) \
    X(float64_max, double, fmax_op<double>) \
    X(float64_land, double, land<double>) \
    X(float64_lor, double, lor<double>) \
    X(float16_sum, uint16_t, hsum<as_half>) \
    X(float16_prod, uint16_t, hprod<as_half>) \
    X(float16_min, uint16_t, hmin<as_half>) \
    X(float16_max, uint16_t, hmax<as_half>) \
    X(float16_land, uint16_t, hland<as_half>) \
    X(float16_lor, uint16_t, hlor<as_half>) \
    X(bfloat16_sum, uint16_t, hsum<as_bf16>) \
    X(bfloat16_prod, uint16_t, hprod<as_bf16>) \
    X(bfloat16_min, uint16_t, hmin<as_bf16>) \
    X(bfloat16_max, uint16_t, hmax<as_bf16>) \
    X(bfloat16_land, uint16_t, hland<as_bf16>) \
    X(bfloat16_lor, uint16_t, hlor<as_bf16>)

#endif
