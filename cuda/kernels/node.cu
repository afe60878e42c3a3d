// node.cu: collectives of the GPUs of one node in one kernel per rank,
// synchronised by the GPUs themselves through flag words in peer memory:
// no host round trip between steps. goring's own design; the protocol
// (flags, epochs, slots, the abort word) and the plans these kernels
// implement step for step are package devsync's (devsync/doc.go and
// devsync/plan_*.go), checked on a CPU model by devsync/cpumodel.
//
// Every rank has a scratch region of the same layout (devsync.Layout):
// the flag area (GORING_NODE_FLAG_BYTES), then two data slots of
// slot_bytes each; a call of epoch e uses slot e&1. Each kernel receives
// every rank's region base (mapped: peer access or IPC), its own input and
// output, the epoch and the host-mapped abort word.
//
// Grid: any number of CTAs up to GORING_NODE_MAX_BLOCKS, the same on every
// rank. CTA b handles part b of every chunk (devsync.Part: 16-byte aligned
// pieces), signals with its own flag words and waits only for CTA b of
// its peers, so CTAs never wait for each other.
//
// Ordering (PTX memory model): the CTA's threads store their part, meet at
// a barrier, and then thread q stores the epoch into rank q's flag word
// with st.release.sys; the barrier puts the other threads' stores before
// the release, which makes them visible at system scope no later than
// the flag. A reader's thread q loads its flag word of peer q with
// ld.acquire.sys until it holds the epoch, and the CTA meets at a barrier
// before any thread loads the peer's data. Spinning threads look at the
// abort word every GORING_NODE_ABORT_EVERY loads; when it is set the
// kernel writes its epoch to its status word (if given) and returns
// without finishing.
//
// Reductions read every rank's element, rank 0 first, and fold them in
// that order: every rank gets the same bits, those of the host's left
// fold (package exec/reduce). Loads are 16-byte vectors when every
// address involved is 16-byte aligned, one element at a time otherwise.
#include <stdint.h>

#include "ops.cuh"

// These must equal devsync's MaxRanks, MaxBlocks, MaxPhases, FlagBytes
// (cuda's TestNodeLayoutMatchesDevsync reads them here).
#define GORING_NODE_MAX_RANKS 8
#define GORING_NODE_MAX_BLOCKS 128
#define GORING_NODE_MAX_PHASES 2
#define GORING_NODE_FLAG_BYTES (GORING_NODE_MAX_PHASES * GORING_NODE_MAX_BLOCKS * GORING_NODE_MAX_RANKS * 8)
#define GORING_NODE_ABORT_EVERY 64

// One kernel's argument, by value (cuda/shim.h: gc_node_args).
struct node_args {
    unsigned long long peer[GORING_NODE_MAX_RANKS]; // scratch region of every rank
    unsigned long long in, out;                     // this rank's buffers
    unsigned long long abort_word;                  // host-mapped, device address; 0: none
    unsigned long long status;                      // host-mapped word set to the epoch on abort; 0: none
    unsigned long long epoch;
    unsigned long long count;      // elements (allgather: bytes) per devsync.Shape.Count
    unsigned long long slot_bytes; // one data slot, a multiple of 16
    unsigned int       rank, nranks;
};

namespace {

typedef unsigned long long u64;

__device__ __forceinline__ void store_release_sys(u64 *p, u64 v)
{
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ u64 load_acquire_sys(const u64 *p)
{
    u64 v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ u64 load_relaxed_sys(const u64 *p)
{
    u64 v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// devsync.Part: piece index of parts of count, pieces a multiple of align.
__device__ __forceinline__ void part(u64 count, u64 parts, u64 index, u64 align, u64 *off, u64 *n)
{
    u64 per = (count + parts - 1) / parts;
    per     = (per + align - 1) / align * align;
    u64 o   = index * per < count ? index * per : count;
    u64 e   = o + per < count ? o + per : count;
    *off    = o;
    *n      = e - o;
}

// devsync.FlagWord in the region at base.
__device__ __forceinline__ u64 *flag_word(u64 base, unsigned phase, unsigned block, unsigned src)
{
    return reinterpret_cast<u64 *>(base) + ((phase * GORING_NODE_MAX_BLOCKS + block) * GORING_NODE_MAX_RANKS + src);
}

__device__ __forceinline__ u64 slot(const node_args &a, unsigned q)
{
    return a.peer[q] + GORING_NODE_FLAG_BYTES + (a.epoch & 1) * a.slot_bytes;
}

// signal: after every thread's stores of this CTA, thread q releases the
// epoch into rank q's flag word (phase, block, rank).
__device__ __forceinline__ void signal(const node_args &a, unsigned phase)
{
    __syncthreads();
    unsigned q = threadIdx.x;
    if (q < a.nranks && q != a.rank) store_release_sys(flag_word(a.peer[q], phase, blockIdx.x, a.rank), a.epoch);
}

// wait: thread q acquires this rank's flag word of peer q; false (for
// every thread of the CTA) when the abort word stopped a wait.
__device__ __forceinline__ bool wait(const node_args &a, unsigned phase)
{
    unsigned q       = threadIdx.x;
    int      aborted = 0;
    if (q < a.nranks && q != a.rank) {
        const u64 *f = flag_word(a.peer[a.rank], phase, blockIdx.x, q);
        for (unsigned spins = 1; load_acquire_sys(f) < a.epoch; spins++) {
            if (spins % GORING_NODE_ABORT_EVERY == 0 && a.abort_word != 0 &&
                load_relaxed_sys(reinterpret_cast<const u64 *>(a.abort_word)) != 0) {
                aborted = 1;
                break;
            }
        }
    }
    if (__syncthreads_or(aborted)) {
        if (threadIdx.x == 0 && a.status != 0) *reinterpret_cast<volatile u64 *>(a.status) = a.epoch;
        return false;
    }
    return true;
}

// copy_to: n bytes from src to each of ndst destinations, this CTA's
// threads striding; 16-byte vectors when every address is aligned, then
// the tail byte by byte.
__device__ __forceinline__ void copy_to(const u64 *dst, unsigned ndst, u64 src, u64 n)
{
    u64 bits = src;
    for (unsigned d = 0; d < ndst; d++) bits |= dst[d];
    u64 i = 0;
    if ((bits & 15) == 0) {
        const uint4 *s = reinterpret_cast<const uint4 *>(src);
        for (u64 v = threadIdx.x; v < n / 16; v += blockDim.x) {
            uint4 x = s[v];
            for (unsigned d = 0; d < ndst; d++) reinterpret_cast<uint4 *>(dst[d])[v] = x;
        }
        i = n / 16 * 16;
    }
    const unsigned char *s = reinterpret_cast<const unsigned char *>(src);
    for (u64 j = i + threadIdx.x; j < n; j += blockDim.x) {
        unsigned char x = s[j];
        for (unsigned d = 0; d < ndst; d++) reinterpret_cast<unsigned char *>(dst[d])[j] = x;
    }
}

__device__ __forceinline__ void copy1(u64 dst, u64 src, u64 n) { copy_to(&dst, 1, src, n); }

// fold_ranks: for n elements at element offset off of every rank's slot,
// acc = ((s0 op s1) op s2) ... in rank order, stored at dst0 and (if not
// 0) dst1. Each thread loads its element of every rank before combining,
// so the n loads over NVLink are in flight together.
template <typename T, typename Op>
__device__ __forceinline__ void fold_ranks(const node_args &a, u64 off, u64 n, u64 dst0, u64 dst1)
{
    Op       op;
    u64      src[GORING_NODE_MAX_RANKS];
    u64      bits = dst0 | dst1;
    unsigned nr   = a.nranks;
    for (unsigned q = 0; q < nr; q++) {
        src[q] = slot(a, q) + off * sizeof(T);
        bits |= src[q];
    }
    u64 i = 0;
    if ((bits & 15) == 0) {
        const u64 per = 16 / sizeof(T);
        for (u64 v = threadIdx.x; v < n / per; v += blockDim.x) {
            vec16<T> x[GORING_NODE_MAX_RANKS];
#pragma unroll
            for (unsigned q = 0; q < GORING_NODE_MAX_RANKS; q++)
                if (q < nr) x[q].raw = reinterpret_cast<const uint4 *>(src[q])[v];
#pragma unroll
            for (unsigned q = 1; q < GORING_NODE_MAX_RANKS; q++)
                if (q < nr)
#pragma unroll
                    for (int k = 0; k < (int)per; k++) x[0].lane[k] = op(x[0].lane[k], x[q].lane[k]);
            reinterpret_cast<uint4 *>(dst0)[v] = x[0].raw;
            if (dst1 != 0) reinterpret_cast<uint4 *>(dst1)[v] = x[0].raw;
        }
        i = n / per * per;
    }
    for (u64 j = i + threadIdx.x; j < n; j += blockDim.x) {
        T acc = reinterpret_cast<const T *>(src[0])[j];
        for (unsigned q = 1; q < nr; q++) acc = op(acc, reinterpret_cast<const T *>(src[q])[j]);
        reinterpret_cast<T *>(dst0)[j] = acc;
        if (dst1 != 0) reinterpret_cast<T *>(dst1)[j] = acc;
    }
}

// One-shot allreduce (devsync/plan_allreduce_oneshot.go).
template <typename T, typename Op> __device__ void oneshot(const node_args &a)
{
    const u64 sz = sizeof(T), vec = 16 / sizeof(T);
    u64       off, n;
    part(a.count, gridDim.x, blockIdx.x, vec, &off, &n);
    copy1(slot(a, a.rank) + off * sz, a.in + off * sz, n * sz);
    signal(a, 0);
    if (!wait(a, 0)) return;
    fold_ranks<T, Op>(a, off, n, a.out + off * sz, 0);
}

// Two-shot allreduce (devsync/plan_allreduce_twoshot.go): chunk q of the
// count, part blockIdx.x of it.
__device__ __forceinline__ void twoshot_part(const node_args &a, unsigned q, u64 vec, u64 *off, u64 *n)
{
    u64 co, cn, po;
    part(a.count, a.nranks, q, vec, &co, &cn);
    part(cn, gridDim.x, blockIdx.x, vec, &po, n);
    *off = co + po;
}

template <typename T, typename Op> __device__ void twoshot(const node_args &a)
{
    const u64 sz = sizeof(T), vec = 16 / sizeof(T);
    u64       off, n;
    for (unsigned q = 0; q < a.nranks; q++) {
        twoshot_part(a, q, vec, &off, &n);
        copy1(slot(a, a.rank) + off * sz, a.in + off * sz, n * sz);
    }
    signal(a, 0);
    if (!wait(a, 0)) return;
    twoshot_part(a, a.rank, vec, &off, &n);
    // In place into the own slot: peers read only their own chunks of it
    // before phase 1, and read this chunk after.
    fold_ranks<T, Op>(a, off, n, slot(a, a.rank) + off * sz, a.out + off * sz);
    signal(a, 1);
    if (!wait(a, 1)) return;
    for (unsigned q = 0; q < a.nranks; q++) {
        if (q == a.rank) continue;
        twoshot_part(a, q, vec, &off, &n);
        copy1(a.out + off * sz, slot(a, q) + off * sz, n * sz);
    }
}

// Reduce-scatter by loads (devsync/plan_reduce_scatter.go): the input is
// nranks blocks of count elements; the output is block rank reduced.
template <typename T, typename Op> __device__ void reduce_scatter(const node_args &a)
{
    const u64 sz = sizeof(T), vec = 16 / sizeof(T);
    u64       off, n;
    part(a.count, gridDim.x, blockIdx.x, vec, &off, &n);
    for (unsigned q = 0; q < a.nranks; q++) {
        u64 o = q * a.count + off;
        copy1(slot(a, a.rank) + o * sz, a.in + o * sz, n * sz);
    }
    signal(a, 0);
    if (!wait(a, 0)) return;
    fold_ranks<T, Op>(a, a.rank * a.count + off, n, a.out + off * sz, 0);
}

} // namespace

// Allgather by stores (devsync/plan_allgather.go), on bytes: count is each
// rank's input in bytes.
extern "C" __global__ void goring_node_allgather(node_args a)
{
    u64 off, n;
    part(a.count, gridDim.x, blockIdx.x, 16, &off, &n);
    u64 dst[GORING_NODE_MAX_RANKS];
    for (unsigned q = 0; q < a.nranks; q++) dst[q] = slot(a, q) + a.rank * a.count + off;
    copy_to(dst, a.nranks, a.in + off, n);
    signal(a, 0);
    if (!wait(a, 0)) return;
    for (unsigned q = 0; q < a.nranks; q++) {
        u64 o = q * a.count + off;
        copy1(a.out + o, slot(a, a.rank) + o, n);
    }
}

// goring_node_{oneshot,twoshot,reduce_scatter}_<dtype>_<op>.
#define GORING_NODE_KERNELS(name, T, Op)                                                                    \
    extern "C" __global__ void goring_node_oneshot_##name(node_args a) { oneshot<T, Op>(a); }               \
    extern "C" __global__ void goring_node_twoshot_##name(node_args a) { twoshot<T, Op>(a); }               \
    extern "C" __global__ void goring_node_reduce_scatter_##name(node_args a) { reduce_scatter<T, Op>(a); }

GORING_FOR_EACH_REDUCTION(GORING_NODE_KERNELS)
