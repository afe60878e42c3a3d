// reducelist.cu: many independent element-wise reductions, dst = dst OP
// src, in one launch (cuda/copylist.go: ReduceListAsync), for the
// executor's batches of reduce steps (exec.BatchLocal): one kernel where
// one goring_reduce launch per step would cost a launch and an event
// each. goring's own code.
//
// The list is an array of descriptors in device memory laid out as the
// copy list's (copylist.cu: copy_desc; cuda/shim.h: gc_copy_desc): a
// source address, a destination address and a byte count, a whole number
// of elements of the kernel's dtype. No descriptor's destination overlaps
// another's source or destination (the reductions are independent, so
// their order does not matter). The host splits a long reduction into
// pieces of at most copyListPiece bytes (a multiple of 16, so a piece
// keeps its reduction's alignment), which spreads it over many CTAs.
//
// One kernel per (dtype, op): goring_reduce_list_<dtype>_<op>, with the
// operators of ops.cuh that reduce.cu uses, so each element's result has
// the bits of goring_reduce's (and of the host kernels, exec/reduce).
//
// Grid: any number of CTAs; CTA b takes descriptors b, b + gridDim.x,
// ..., its threads striding over the descriptor's elements: 16-byte
// vectors where source and destination are both 16-byte aligned, then
// the tail one element at a time; one element at a time otherwise.
#include <stdint.h>

#include "ops.cuh"

// One reduction (the layout of copylist.cu's copy_desc).
struct reduce_desc {
    unsigned long long src, dst, bytes;
};

namespace {

typedef unsigned long long u64;

template <typename T, typename Op> __device__ __forceinline__ void reduce_list_body(const reduce_desc *__restrict__ list, u64 n)
{
    Op op;
    for (u64 i = blockIdx.x; i < n; i += gridDim.x) {
        const reduce_desc r = list[i];
        T                *d = reinterpret_cast<T *>(r.dst);
        const T          *s = reinterpret_cast<const T *>(r.src);
        const u64         elems = r.bytes / sizeof(T);
        u64               k = 0;
        if (((r.src | r.dst) & 15) == 0) {
            const u64    per = 16 / sizeof(T);
            const u64    nv  = elems / per;
            uint4       *d4  = reinterpret_cast<uint4 *>(d);
            const uint4 *s4  = reinterpret_cast<const uint4 *>(s);
            for (u64 v = threadIdx.x; v < nv; v += blockDim.x) {
                vec16<T> a, b;
                a.raw = d4[v];
                b.raw = s4[v];
#pragma unroll
                for (int l = 0; l < (int)per; l++) a.lane[l] = op(a.lane[l], b.lane[l]);
                d4[v] = a.raw;
            }
            k = nv * per;
        }
        for (u64 j = k + threadIdx.x; j < elems; j += blockDim.x) d[j] = op(d[j], s[j]);
    }
}

} // namespace

#define GORING_REDUCE_LIST_KERNEL(name, T, Op)                                                         \
    extern "C" __global__ void goring_reduce_list_##name(const reduce_desc *__restrict__ list, u64 n) \
    {                                                                                                  \
        reduce_list_body<T, Op>(list, n);                                                              \
    }

GORING_FOR_EACH_REDUCTION(GORING_REDUCE_LIST_KERNEL)
