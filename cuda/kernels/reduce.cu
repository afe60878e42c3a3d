// reduce.cu: goring's element-wise reductions, dst[i] = dst[i] OP src[i],
// for every dtype and op goring reduces on the host (package exec/reduce).
// Results are bit-identical to the host kernels for finite values:
// integers wrap on overflow; float16 and bfloat16 are widened to float32,
// combined there and rounded back to nearest-even; min and max order -0
// below +0; logical ops give 1 or 0 in the element's own type.
//
// Built ahead of time (scripts/build_kernels.sh) into cubins and PTX that
// package cuda embeds and loads with the driver API: the binary needs the
// NVIDIA driver only, no toolkit at run time.
//
// Each kernel takes (dst, src, n elements). When both pointers are 16-byte
// aligned a thread handles 16 bytes per step with one vector load of each
// operand; otherwise, and for the tail, one element per step. A
// grid-stride loop lets a fixed grid (sized from the SM count by the
// caller) cover any n.
//
// The multi kernels (goring_reduce_multi_<dtype>_<op>, goring_copy_multi)
// take up to GORING_MULTI_MAX sources and destinations in one struct:
// each element of the sources is read once, reduced in source order
// (((s0 op s1) op s2) ..., the bits of a serial loop over ranks) and
// written to every destination. One process doing a shared GPU's
// allreduce reads P inputs and writes P results, where pairwise kernels
// read and write the partial result again for every input and output
// (package onedevice). A destination may be one of the sources (in
// place): a thread reads all its element's sources before it writes, so
// no pointer is restrict and no source goes through the read-only cache.
#include <stdint.h>

#include "ops.cuh"

namespace {

template <typename T, typename Op>
__device__ __forceinline__ void reduce_body(T *__restrict__ dst, const T *__restrict__ src, unsigned long long n)
{
    Op                 op;
    unsigned long long tid    = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i      = 0;
    if ((((uintptr_t)dst | (uintptr_t)src) & 15) == 0) {
        const unsigned long long per = 16 / sizeof(T);
        unsigned long long       nv  = n / per;
        uint4                   *d4  = reinterpret_cast<uint4 *>(dst);
        const uint4             *s4  = reinterpret_cast<const uint4 *>(src);
        for (unsigned long long v = tid; v < nv; v += stride) {
            vec16<T> a, b;
            a.raw = d4[v];
            b.raw = __ldg(&s4[v]);
#pragma unroll
            for (int k = 0; k < (int)per; k++) a.lane[k] = op(a.lane[k], b.lane[k]);
            d4[v] = a.raw;
        }
        i = nv * per;
    }
    for (unsigned long long j = i + tid; j < n; j += stride) dst[j] = op(dst[j], src[j]);
}

// The multi kernels' argument, one struct by value (cuda/shim.h has the
// same layout): device addresses, the counts used, and n (elements for a
// reduction, bytes for a copy).
#define GORING_MULTI_MAX 8
struct multi_args {
    unsigned long long src[GORING_MULTI_MAX];
    unsigned long long dst[GORING_MULTI_MAX];
    unsigned int       nsrc, ndst;
    unsigned long long n;
};

__device__ __forceinline__ bool multi_aligned(const multi_args &a)
{
    unsigned long long bits = 0;
    for (unsigned k = 0; k < a.nsrc; k++) bits |= a.src[k];
    for (unsigned k = 0; k < a.ndst; k++) bits |= a.dst[k];
    return (bits & 15) == 0;
}

template <typename T, typename Op> __device__ __forceinline__ void reduce_multi_body(const multi_args &a)
{
    Op                 op;
    unsigned long long tid    = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i      = 0;
    if (multi_aligned(a)) {
        const unsigned long long per = 16 / sizeof(T);
        unsigned long long       nv  = a.n / per;
        for (unsigned long long v = tid; v < nv; v += stride) {
            vec16<T> acc, b;
            acc.raw = reinterpret_cast<const uint4 *>(a.src[0])[v];
            for (unsigned s = 1; s < a.nsrc; s++) {
                b.raw = reinterpret_cast<const uint4 *>(a.src[s])[v];
#pragma unroll
                for (int k = 0; k < (int)per; k++) acc.lane[k] = op(acc.lane[k], b.lane[k]);
            }
            for (unsigned d = 0; d < a.ndst; d++) reinterpret_cast<uint4 *>(a.dst[d])[v] = acc.raw;
        }
        i = nv * per;
    }
    for (unsigned long long j = i + tid; j < a.n; j += stride) {
        T acc = reinterpret_cast<const T *>(a.src[0])[j];
        for (unsigned s = 1; s < a.nsrc; s++) acc = op(acc, reinterpret_cast<const T *>(a.src[s])[j]);
        for (unsigned d = 0; d < a.ndst; d++) reinterpret_cast<T *>(a.dst[d])[j] = acc;
    }
}

} // namespace

// goring_copy_multi: src[0]'s n bytes into every destination, read once.
extern "C" __global__ void goring_copy_multi(multi_args a)
{
    unsigned long long tid    = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i      = 0;
    if (multi_aligned(a)) {
        unsigned long long nv = a.n / 16;
        const uint4       *s4 = reinterpret_cast<const uint4 *>(a.src[0]);
        for (unsigned long long v = tid; v < nv; v += stride) {
            uint4 x = s4[v];
            for (unsigned d = 0; d < a.ndst; d++) reinterpret_cast<uint4 *>(a.dst[d])[v] = x;
        }
        i = nv * 16;
    }
    for (unsigned long long j = i + tid; j < a.n; j += stride) {
        unsigned char x = reinterpret_cast<const unsigned char *>(a.src[0])[j];
        for (unsigned d = 0; d < a.ndst; d++) reinterpret_cast<unsigned char *>(a.dst[d])[j] = x;
    }
}

// One extern "C" kernel per (dtype, op): goring_reduce_<dtype>_<op>, and
// its multi form goring_reduce_multi_<dtype>_<op>.
#define GORING_KERNEL(name, T, Op)                                                               \
    extern "C" __global__ void goring_reduce_##name(T *dst, const T *src, unsigned long long n) \
    {                                                                                            \
        reduce_body<T, Op>(dst, src, n);                                                         \
    }                                                                                            \
    extern "C" __global__ void goring_reduce_multi_##name(multi_args a) { reduce_multi_body<T, Op>(a); }

#define GORING_INT_KERNELS(tname, T)                    \
    GORING_KERNEL(tname##_sum, T, isum<T>)              \
    GORING_KERNEL(tname##_prod, T, iprod<T>)            \
    GORING_KERNEL(tname##_min, T, imin<T>)              \
    GORING_KERNEL(tname##_max, T, imax<T>)              \
    GORING_KERNEL(tname##_land, T, land<T>)             \
    GORING_KERNEL(tname##_lor, T, lor<T>)               \
    GORING_KERNEL(tname##_band, T, band<T>)             \
    GORING_KERNEL(tname##_bor, T, bor<T>)               \
    GORING_KERNEL(tname##_bxor, T, bxor<T>)

GORING_INT_KERNELS(int8, int8_t)
GORING_INT_KERNELS(int16, int16_t)
GORING_INT_KERNELS(int32, int32_t)
GORING_INT_KERNELS(int64, int64_t)
GORING_INT_KERNELS(uint8, uint8_t)
GORING_INT_KERNELS(uint16, uint16_t)
GORING_INT_KERNELS(uint32, uint32_t)
GORING_INT_KERNELS(uint64, uint64_t)

#define GORING_FLOAT_KERNELS(tname, T)                  \
    GORING_KERNEL(tname##_sum, T, fsum<T>)              \
    GORING_KERNEL(tname##_prod, T, fprod<T>)            \
    GORING_KERNEL(tname##_min, T, fmin_op<T>)           \
    GORING_KERNEL(tname##_max, T, fmax_op<T>)           \
    GORING_KERNEL(tname##_land, T, land<T>)             \
    GORING_KERNEL(tname##_lor, T, lor<T>)

GORING_FLOAT_KERNELS(float32, float)
GORING_FLOAT_KERNELS(float64, double)

#define GORING_HALF_KERNELS(tname, Fmt)                     \
    GORING_KERNEL(tname##_sum, uint16_t, hsum<Fmt>)         \
    GORING_KERNEL(tname##_prod, uint16_t, hprod<Fmt>)       \
    GORING_KERNEL(tname##_min, uint16_t, hmin<Fmt>)         \
    GORING_KERNEL(tname##_max, uint16_t, hmax<Fmt>)         \
    GORING_KERNEL(tname##_land, uint16_t, hland<Fmt>)       \
    GORING_KERNEL(tname##_lor, uint16_t, hlor<Fmt>)

GORING_HALF_KERNELS(float16, as_half)
GORING_HALF_KERNELS(bfloat16, as_bf16)
