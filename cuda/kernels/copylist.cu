// copylist.cu: many independent copies of device memory in one launch
// (cuda/copylist.go: CopyListAsync), for the executor's batches of copy
// steps (exec.BatchLocal): one kernel where one cuMemcpyAsync per copy
// would cost a driver call and an event each. goring's own code.
//
// The list is an array of descriptors in device memory, each a source
// address, a destination address and a byte count; no copy's bytes
// overlap another's destination (the copies are independent, so their
// order does not matter). The host splits a long copy into pieces of at
// most copyListPiece bytes (copylist.go; a multiple of 16, so a piece
// keeps its copy's alignment), which spreads one long copy over many CTAs.
//
// Grid: any number of CTAs; CTA b copies descriptors b, b + gridDim.x,
// ..., its threads striding over the descriptor's bytes: 16-byte vector
// loads and stores where source and destination have the same alignment
// modulo 16 (a few single bytes up to the first 16-byte boundary, then
// vectors, then the tail's bytes), single bytes otherwise.
#include <stdint.h>

// One copy (cuda/shim.h: gc_copy_desc).
struct copy_desc {
    unsigned long long src, dst, bytes;
};

namespace {

typedef unsigned long long u64;

// copy_bytes copies bytes [from, to) of one descriptor, one byte a thread
// at a time.
__device__ __forceinline__ void copy_bytes(unsigned char *d, const unsigned char *s, u64 from, u64 to)
{
    for (u64 k = from + threadIdx.x; k < to; k += blockDim.x) {
        d[k] = s[k];
    }
}

// copy_vectors copies n 16-byte vectors, four a thread in flight.
__device__ __forceinline__ void copy_vectors(uint4 *d, const uint4 *s, u64 n)
{
    const u64 b = blockDim.x;
    u64       k = threadIdx.x;
    for (; k + 3 * b < n; k += 4 * b) {
        const uint4 v0 = s[k], v1 = s[k + b], v2 = s[k + 2 * b], v3 = s[k + 3 * b];
        d[k] = v0;
        d[k + b] = v1;
        d[k + 2 * b] = v2;
        d[k + 3 * b] = v3;
    }
    for (; k < n; k += b) {
        d[k] = s[k];
    }
}

} // namespace

extern "C" __global__ void goring_copy_list(const copy_desc *__restrict__ list, u64 n)
{
    for (u64 i = blockIdx.x; i < n; i += gridDim.x) {
        const copy_desc      c = list[i];
        const unsigned char *s = reinterpret_cast<const unsigned char *>(c.src);
        unsigned char       *d = reinterpret_cast<unsigned char *>(c.dst);
        if (((c.src ^ c.dst) & 15) != 0) {
            copy_bytes(d, s, 0, c.bytes);
            continue;
        }
        u64 head = (16 - (c.src & 15)) & 15;
        if (head > c.bytes) {
            head = c.bytes;
        }
        const u64 vectors = (c.bytes - head) / 16;
        copy_bytes(d, s, 0, head);
        copy_vectors(reinterpret_cast<uint4 *>(d + head), reinterpret_cast<const uint4 *>(s + head), vectors);
        copy_bytes(d, s, head + 16 * vectors, c.bytes);
    }
}
