// node.cu: collectives of the GPUs of one node in one kernel per rank,
// synchronised by the GPUs themselves through flag words in peer memory:
// no host round trip between steps. goring's own design; the protocol
// (flags, epochs, slots, the abort word) and the plans these kernels
// implement step for step are package devsync's (devsync/doc.go and
// devsync/plan_*.go), checked on a CPU model by devsync/cpumodel.
//
// Every rank has a scratch region of the same layout (devsync/layout.go):
// the flag area (GORING_NODE_FLAG_BYTES), the LL area's two parities
// (GORING_NODE_LL_BYTES each; devsync/ll.go), then two data slots of
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
// the flag; a CTA that stored into peers' slots has every thread fence at
// system scope before that barrier (signal_stored). A reader's thread q
// loads its flag word of peer q with
// ld.acquire.sys until it holds the epoch, and the CTA meets at a barrier
// before any thread loads the peer's data. Spinning threads look at the
// abort word every GORING_NODE_ABORT_EVERY loads; when it is set the
// kernel writes its epoch to its status word (if given) and leaves the
// call unfinished. Either way every CTA ends by releasing the epoch into
// its host-mapped done word (finish), which is how the host sees a call
// end.
//
// Reductions read every rank's element, rank 0 first, and fold them in
// that order: every rank gets the same bits, those of the host's left
// fold (package exec/reduce). Loads are 16-byte vectors when every
// address involved is 16-byte aligned, one element at a time otherwise
// (byte by byte where a caller's buffer is not aligned to its element).
#include <stdint.h>

#include "ops.cuh"

// These must equal devsync's MaxRanks, MaxBlocks, MaxPhases, FlagBytes,
// LLAreaBytes (cuda's TestNodeLayoutMatchesDevsync reads them here).
#define GORING_NODE_MAX_RANKS 8
#define GORING_NODE_MAX_BLOCKS 128
#define GORING_NODE_MAX_PHASES 2
#define GORING_NODE_FLAG_BYTES (GORING_NODE_MAX_PHASES * GORING_NODE_MAX_BLOCKS * GORING_NODE_MAX_RANKS * 8)
#define GORING_NODE_LL_BYTES (2 << 20)
#define GORING_NODE_ABORT_EVERY 64

// One kernel's argument, by value (cuda/shim.h: gc_node_args).
struct node_args {
    unsigned long long peer[GORING_NODE_MAX_RANKS]; // scratch region of every rank
    unsigned long long in, out;                     // this rank's buffers
    unsigned long long abort_word;                  // host-mapped, device address; 0: none
    unsigned long long status;                      // host-mapped word set to the epoch on abort; 0: none
    unsigned long long done;                        // host-mapped done words, one per block; 0: none
    unsigned long long epoch;
    unsigned long long count;      // elements (allgather: bytes) per devsync.Shape.Count
    unsigned long long slot_bytes; // one data slot, a multiple of 16
    unsigned long long stride;     // reduce_scatter: elements between input blocks (devsync.Shape.BlockStride)
    unsigned long long ring;       // host-mapped ring (devsync/resident.go); 0: a kernel of this one call
    unsigned long long mailbox;    // device memory: CTA 0 passes the ring's calls to the other CTAs
    unsigned long long linger;     // ns a resident kernel waits for the next call
    unsigned int       rank, nranks;
    unsigned int       root; // bcast: the rank whose input every rank gets
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
    return a.peer[q] + GORING_NODE_FLAG_BYTES + 2 * GORING_NODE_LL_BYTES + (a.epoch & 1) * a.slot_bytes;
}

// GORING_NODE_ALL: signal and wait deal with every peer, not one.
#define GORING_NODE_ALL 0xffffffffu

// peer_of: whether thread q stands for a peer of this rank that a signal
// or wait with only (one rank, or GORING_NODE_ALL) deals with.
__device__ __forceinline__ bool peer_of(const node_args &a, unsigned q, unsigned only)
{
    return q < a.nranks && q != a.rank && (only == GORING_NODE_ALL || q == only);
}

// signal: after every thread's stores of this CTA, thread q releases the
// epoch into rank q's flag word (phase, block, rank), for every peer q or
// only the one named.
__device__ __forceinline__ void signal(const node_args &a, unsigned phase, unsigned only = GORING_NODE_ALL)
{
    __syncthreads();
    unsigned q = threadIdx.x;
    if (peer_of(a, q, only)) store_release_sys(flag_word(a.peer[q], phase, blockIdx.x, a.rank), a.epoch);
}

// signal_stored: signal after stores into peers' slots. Each thread first
// fences at system scope, so that its stores over NVLink are performed
// before the CTA's barrier and the flag's release (the release's
// cumulativity over another GPU's memory is not something to lean on).
__device__ __forceinline__ void signal_stored(const node_args &a, unsigned phase, unsigned only = GORING_NODE_ALL)
{
    __threadfence_system();
    signal(a, phase, only);
}

// wait: thread q acquires this rank's flag word of peer q, for every
// peer q or only the one named; false (for every thread of the CTA) when
// the abort word stopped a wait.
__device__ __forceinline__ bool wait(const node_args &a, unsigned phase, unsigned only = GORING_NODE_ALL)
{
    unsigned q       = threadIdx.x;
    int      aborted = 0;
    if (peer_of(a, q, only)) {
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

// finish: the CTA's end (devsync/doc.go "Completion"), after its last
// store or an aborted wait: the CTA meets at a barrier and thread 0
// releases the epoch into the block's host-mapped done word, so that the
// host can see the call end without an event behind the kernel.
__device__ __forceinline__ void finish(const node_args &a)
{
    if (a.done == 0) return;
    __syncthreads();
    if (threadIdx.x == 0) {
        store_release_sys(reinterpret_cast<u64 *>(a.done) + blockIdx.x, a.epoch);
        // A resident kernel's thread 0 now spins on loads, and a store to
        // pinned memory can wait in the GPU while it does: the fence
        // sends the done word on its way (a launched kernel ends here).
        if (a.ring != 0) asm volatile("fence.sc.sys;" ::: "memory");
    }
}

// Resident kernels (devsync/resident.go): a kernel launched with a ring
// takes the team's next calls from it after its first, until no call
// came for its linger, the host's stop word names its last call, or the
// abort word is set. The ring holds the call's fields as pairs (epoch,
// field), pair 0's epoch the doorbell; these indices equal devsync's.
#define GORING_RING_FIELDS 6 // in, out, count, stride, root, linger: pairs 0-5
#define GORING_RING_STOP 12
#define GORING_RING_PARKED 16
#define GORING_RING_FINAL 17
#define GORING_LEAVE_MARK (1ull << 63)
#define GORING_RING_LOOK_EVERY 16 // doorbell loads between looks at the clock, the stop and abort words

__device__ __forceinline__ u64 globaltimer()
{
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ void store_relaxed_sys(u64 *p, u64 v)
{
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void store_relaxed_gpu(u64 *p, u64 v)
{
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void store_release_gpu(u64 *p, u64 v)
{
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ u64 load_acquire_gpu(const u64 *p)
{
    u64 v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ u64 load_relaxed_gpu(const u64 *p)
{
    u64 v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// load_pair: one 16-byte load of a ring pair, its epoch and its field
// together. A load of pinned host memory costs a round trip over PCIe
// (about 1.1 µs on an H200): six threads each poll a pair, so the call's
// fields arrive with its doorbell, not one round trip each after it.
__device__ __forceinline__ void load_pair(const u64 *p, u64 *epoch, u64 *field)
{
    asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(*epoch), "=l"(*field) : "l"(p) : "memory");
}

__device__ __forceinline__ bool aborted(const node_args &a)
{
    return a.abort_word != 0 && load_relaxed_sys(reinterpret_cast<const u64 *>(a.abort_word)) != 0;
}

// ring_doorbell: thread 0 of CTA 0 waits for the call after a.epoch
// (pair 0's epoch) and returns its field 0, or false to leave. Before it
// leaves for the linger it parks (devsync/resident.go): the parked word,
// a sequentially consistent fence at system scope, the doorbell again,
// and the final word saying which way it went; without the fence the
// host's doorbell and this parking could miss each other.
__device__ bool ring_doorbell(const node_args &a, u64 *field)
{
    u64 *const ring = reinterpret_cast<u64 *>(a.ring);
    const u64  e = a.epoch, start = globaltimer();
    u64        ep;
    for (unsigned spins = 1;; spins++) {
        load_pair(ring, &ep, field);
        if (ep == e + 1) return true;
        if (spins % GORING_RING_LOOK_EVERY != 0) continue;
        if (load_relaxed_sys(ring + GORING_RING_STOP) >= e || aborted(a)) return false;
        if (globaltimer() - start < a.linger) continue;
        store_relaxed_sys(ring + GORING_RING_PARKED, e);
        asm volatile("fence.sc.sys;" ::: "memory");
        load_pair(ring, &ep, field);
        const bool took = ep == e + 1;
        store_relaxed_sys(ring + GORING_RING_FINAL, e << 1 | (took ? 1 : 0));
        asm volatile("fence.sc.sys;" ::: "memory"); // the host waits for this word: send it (finish says why)
        return took;
    }
}

// next_call: every thread of the CTA, after the call of s.epoch. In CTA
// 0, thread 0 waits for the doorbell while threads 1-5 wait for their
// pairs (or thread 0's word to leave); then thread 0 releases the call
// (or the leave mark) into the mailbox, where the other CTAs' thread 0
// acquires it, watching the abort word. On a call, s becomes it; false
// (the same for every thread): leave.
__device__ bool next_call(node_args &s)
{
    __shared__ u64          f[GORING_RING_FIELDS];
    __shared__ volatile int verdict; // CTA 0: -1 waiting, 0 leave, 1 take
    u64 *const              box = reinterpret_cast<u64 *>(s.mailbox);
    const u64               e   = s.epoch;
    const unsigned          t   = threadIdx.x;
    if (blockIdx.x == 0) {
        if (t == 0) verdict = -1;
        __syncthreads();
        if (t == 0) {
            u64        v;
            const bool take = ring_doorbell(s, &v);
            if (take) {
                f[0] = v;
                // An acquire: this call's input, which the caller wrote
                // before the doorbell, is read through this SM's L1.
                asm volatile("fence.acq_rel.sys;" ::: "memory");
            }
            verdict = take ? 1 : 0;
        } else if (t < GORING_RING_FIELDS) {
            const u64 *pair = reinterpret_cast<const u64 *>(s.ring) + 2 * t;
            for (;;) {
                u64 ep, v;
                load_pair(pair, &ep, &v);
                if (ep == e + 1) {
                    f[t] = v;
                    break;
                }
                if (verdict == 0) break;
            }
        }
        __syncthreads();
        if (t == 0) {
            if (verdict == 1)
                for (unsigned i = 0; i < GORING_RING_FIELDS; i++) store_relaxed_gpu(box + 1 + i, f[i]);
            store_release_gpu(box, verdict == 1 ? e + 1 : (GORING_LEAVE_MARK | e));
        }
        if (verdict == 0) return false;
    } else {
        __shared__ int take;
        if (t == 0) {
            take = 0;
            for (unsigned spins = 1;; spins++) {
                const u64 v = load_acquire_gpu(box);
                if (v == e + 1) {
                    take = 1;
                    break;
                }
                if (v == (GORING_LEAVE_MARK | e)) break;
                if (spins % GORING_NODE_ABORT_EVERY == 0 && aborted(s)) break;
            }
            if (take)
                for (unsigned i = 0; i < GORING_RING_FIELDS; i++) f[i] = load_relaxed_gpu(box + 1 + i);
        }
        __syncthreads();
        if (!take) return false;
    }
    if (t == 0) {
        s.in = f[0], s.out = f[1], s.count = f[2], s.stride = f[3], s.root = (unsigned)f[4], s.linger = f[5];
        s.epoch = e + 1;
    }
    __syncthreads();
    return true;
}

// serve: run call on a, then, for a resident kernel, every call the ring
// hands it. The CTA keeps its call in shared memory (one inlined body of
// call for both kinds of kernel); thread 0 rewrites it between calls,
// after finish's barrier and next_call's (no thread reads it then), and
// before the barrier that lets the others read it again.
template <typename Call> __device__ __forceinline__ void serve(const node_args &a, Call call)
{
    __shared__ node_args s;
    if (threadIdx.x == 0) s = a;
    __syncthreads();
    const bool resident = a.ring != 0 && a.done != 0 && a.mailbox != 0;
    do {
        call(s);
        finish(s);
    } while (resident && next_call(s));
}

// Memory-level parallelism. A load over NVLink takes microseconds, so a
// GPU only approaches the link's ~450 GB/s with megabytes of loads in
// flight. Every vector loop below therefore has each thread issue a group
// of independent 16-byte loads (GORING_NODE_INFLIGHT of them, over all its
// sources) before it uses any of them; a plain strided loop keeps one load
// per thread in flight, since its stores may alias the next iteration's
// loads.
//
// Tiles: warp w of the CTA takes tiles w, w + warps, ... of 32*U vectors;
// lane l's vectors of a tile at t are t + l + 32*u for u < U. Each load
// instruction of a warp reads 512 contiguous bytes, and a thread reaches
// its U vectors from one pointer with constant offsets (per-vector 64-bit
// addresses would not fit the registers). A CTA whose size is not a
// multiple of 32 leaves its last, partial warp out of the vector loops.
//
// The kernels are built for CTAs of up to GORING_NODE_MAX_THREADS threads
// (the most NodeLaunchAsync takes), which caps registers at 64 a thread:
// groups of 8 vectors fit without spilling.
#define GORING_NODE_INFLIGHT 8
#define GORING_NODE_MAX_THREADS 1024

// tile_loop: calls body(v, rem) for this thread's first vector v of every
// tile of 32*U vectors below nvec, rem = nvec - v (the vectors v + 32*u
// with 32*u < rem are in range).
template <unsigned U, typename Body> __device__ __forceinline__ void tile_loop(u64 nvec, Body body)
{
    const unsigned warps = blockDim.x / 32, w = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (w >= warps) return;
    for (u64 t = (u64)w * (32 * U); t < nvec; t += (u64)warps * (32 * U)) {
        u64 v = t + lane;
        body(v, v < nvec ? nvec - v : 0);
    }
}

// copy_to: n bytes from src to each of ndst destinations; 16-byte vectors
// when every address is aligned, then the tail byte by byte. One read of
// the source for all the stores.
__device__ __forceinline__ void copy_to(const u64 *dst, unsigned ndst, u64 src, u64 n)
{
    const unsigned U    = GORING_NODE_INFLIGHT / 2; // registers for the destinations too
    u64            bits = src;
    for (unsigned d = 0; d < ndst; d++) bits |= dst[d];
    u64 i = 0;
    if ((bits & 15) == 0) {
        const u64 nvec = n / 16;
        tile_loop<U>(nvec, [&](u64 v, u64 rem) {
            const uint4 *s = reinterpret_cast<const uint4 *>(src) + v;
            uint4        x[U] = {};
#pragma unroll
            for (unsigned u = 0; u < U; u++)
                if (32 * u < rem) x[u] = s[32 * u];
            for (unsigned d = 0; d < ndst; d++) {
                uint4 *o = reinterpret_cast<uint4 *>(dst[d]) + v;
#pragma unroll
                for (unsigned u = 0; u < U; u++)
                    if (32 * u < rem) o[32 * u] = x[u];
            }
        });
        i = nvec * 16;
    }
    const unsigned char *s = reinterpret_cast<const unsigned char *>(src);
    for (u64 j = i + threadIdx.x; j < n; j += blockDim.x) {
        unsigned char x = s[j];
        for (unsigned d = 0; d < ndst; d++) reinterpret_cast<unsigned char *>(dst[d])[j] = x;
    }
}

// copy_pairs_vec: for every pair i < np (at most P), nvec[i] vectors from
// src[i] to dst[i] (most: the largest nvec), the loads of all pairs in
// flight together: a rank that gathers chunks from its peers reads from
// all of them at once, so every GPU's links carry traffic from every
// peer, and no peer is read by all the others while the rest idle (as
// when every rank walks its peers in the same order).
template <unsigned P, unsigned U>
__device__ __forceinline__ void copy_pairs_vec(const u64 *src, const u64 *dst, const u64 *nvec, unsigned np, u64 most)
{
    tile_loop<U>(most, [&](u64 v, u64) {
        uint4 x[P][U] = {};
#pragma unroll
        for (unsigned i = 0; i < P; i++)
            if (i < np) {
                const uint4 *s   = reinterpret_cast<const uint4 *>(src[i]) + v;
                u64          rem = v < nvec[i] ? nvec[i] - v : 0;
#pragma unroll
                for (unsigned u = 0; u < U; u++)
                    if (32 * u < rem) x[i][u] = s[32 * u];
            }
#pragma unroll
        for (unsigned i = 0; i < P; i++)
            if (i < np) {
                uint4 *o   = reinterpret_cast<uint4 *>(dst[i]) + v;
                u64    rem = v < nvec[i] ? nvec[i] - v : 0;
#pragma unroll
                for (unsigned u = 0; u < U; u++)
                    if (32 * u < rem) o[32 * u] = x[i][u];
            }
    });
}

// copy_pairs: n[i] bytes from src[i] to dst[i] for every i < np (at most
// GORING_NODE_MAX_RANKS): vectors when every address is aligned, then the
// tails byte by byte.
__device__ __forceinline__ void copy_pairs(const u64 *src, const u64 *dst, const u64 *n, unsigned np)
{
    u64 bits = 0, nvec[GORING_NODE_MAX_RANKS], most = 0;
    for (unsigned i = 0; i < np; i++) bits |= src[i] | dst[i];
    const bool vec = (bits & 15) == 0;
    for (unsigned i = 0; i < np; i++) {
        nvec[i] = vec ? n[i] / 16 : 0;
        most    = nvec[i] > most ? nvec[i] : most;
    }
    // Groups of about GORING_NODE_INFLIGHT vectors whatever np: one pair
    // alone, else up to 3 pairs together (more would not fit in 64
    // registers: beyond 4 ranks the peers go 3 at a time).
    if (most > 0 && np == 1) copy_pairs_vec<1, GORING_NODE_INFLIGHT>(src, dst, nvec, 1, most);
    for (unsigned g = 0; most > 0 && np > 1 && g < np; g += 3) {
        unsigned k = np - g < 3 ? np - g : 3;
        u64      m = 0;
        for (unsigned i = g; i < g + k; i++) m = nvec[i] > m ? nvec[i] : m;
        copy_pairs_vec<3, GORING_NODE_INFLIGHT / 4>(src + g, dst + g, nvec + g, k, m);
    }
    for (unsigned i = 0; i < np; i++) {
        const unsigned char *s = reinterpret_cast<const unsigned char *>(src[i]);
        unsigned char       *d = reinterpret_cast<unsigned char *>(dst[i]);
        for (u64 j = nvec[i] * 16 + threadIdx.x; j < n[i]; j += blockDim.x) d[j] = s[j];
    }
}

__device__ __forceinline__ void copy1(u64 dst, u64 src, u64 n) { copy_pairs(&src, &dst, &n, 1); }

// fold_vec: nvec vectors of every source src[0..nr) (nr at most R),
// combined in that order, stored at dst0 and (if not 0) dst1. Each
// thread loads its U vectors of every source before combining any.
template <typename T, typename Op, unsigned R, unsigned U>
__device__ __forceinline__ void fold_vec(const u64 *src, unsigned nr, u64 nvec, u64 dst0, u64 dst1)
{
    tile_loop<U>(nvec, [&](u64 v, u64 rem) {
        Op             op;
        const unsigned per = 16 / sizeof(T);
        vec16<T>       x[R][U] = {};
#pragma unroll
        for (unsigned q = 0; q < R; q++)
            if (q < nr) {
                const uint4 *s = reinterpret_cast<const uint4 *>(src[q]) + v;
#pragma unroll
                for (unsigned u = 0; u < U; u++)
                    if (32 * u < rem) x[q][u].raw = s[32 * u];
            }
#pragma unroll
        for (unsigned u = 0; u < U; u++) {
            if (32 * u >= rem) break;
#pragma unroll
            for (unsigned q = 1; q < R; q++)
                if (q < nr)
#pragma unroll
                    for (unsigned k = 0; k < per; k++) x[0][u].lane[k] = op(x[0][u].lane[k], x[q][u].lane[k]);
            reinterpret_cast<uint4 *>(dst0)[v + 32 * u] = x[0][u].raw;
            if (dst1 != 0) reinterpret_cast<uint4 *>(dst1)[v + 32 * u] = x[0][u].raw;
        }
    });
}

// load_elem, store_elem: element j of the array at base, as one T access
// (whole: base is aligned to T) or byte by byte.
template <typename T> __device__ __forceinline__ T load_elem(u64 base, u64 j, bool whole)
{
    if (whole) return reinterpret_cast<const T *>(base)[j];
    T                    v;
    const unsigned char *s = reinterpret_cast<const unsigned char *>(base) + j * sizeof(T);
    unsigned char       *d = reinterpret_cast<unsigned char *>(&v);
#pragma unroll
    for (unsigned k = 0; k < sizeof(T); k++) d[k] = s[k];
    return v;
}

template <typename T> __device__ __forceinline__ void store_elem(u64 base, u64 j, T v, bool whole)
{
    if (whole) {
        reinterpret_cast<T *>(base)[j] = v;
        return;
    }
    unsigned char       *d = reinterpret_cast<unsigned char *>(base) + j * sizeof(T);
    const unsigned char *s = reinterpret_cast<const unsigned char *>(&v);
#pragma unroll
    for (unsigned k = 0; k < sizeof(T); k++) d[k] = s[k];
}

// fold_sources: for n elements at each of src[0..nr), acc = ((s0 op s1)
// op s2) ... in that order (src[q] is rank q's operand: the rank order),
// stored at dst0 and (if not 0) dst1. Every rank gets the same bits: the
// order is the rank order whoever reduces.
template <typename T, typename Op>
__device__ __forceinline__ void fold_sources(const u64 *src, unsigned nr, u64 n, u64 dst0, u64 dst1)
{
    Op  op;
    u64 bits = dst0 | dst1;
    for (unsigned q = 0; q < nr; q++) bits |= src[q];
    u64 i = 0;
    if ((bits & 15) == 0) {
        const u64 per = 16 / sizeof(T);
        // Groups of GORING_NODE_INFLIGHT vectors over all the sources.
        if (nr <= 2)
            fold_vec<T, Op, 2, GORING_NODE_INFLIGHT / 2>(src, nr, n / per, dst0, dst1);
        else if (nr <= 4)
            fold_vec<T, Op, 4, GORING_NODE_INFLIGHT / 4>(src, nr, n / per, dst0, dst1);
        else
            fold_vec<T, Op, GORING_NODE_MAX_RANKS, GORING_NODE_INFLIGHT / GORING_NODE_MAX_RANKS>(src, nr, n / per, dst0, dst1);
        i = n / per * per;
    }
    // A caller's buffer may start at any byte (team/aligned.go: a rank
    // cannot refuse such a call alone, its peers would wait for ever), and
    // a T access off its alignment faults: elements of such a call are
    // read and written byte by byte. Slots are always aligned.
    const bool whole = bits % sizeof(T) == 0;
    for (u64 j = i + threadIdx.x; j < n; j += blockDim.x) {
        T acc = load_elem<T>(src[0], j, whole);
        for (unsigned q = 1; q < nr; q++) acc = op(acc, load_elem<T>(src[q], j, whole));
        store_elem<T>(dst0, j, acc, whole);
        if (dst1 != 0) store_elem<T>(dst1, j, acc, whole);
    }
}

// fold_ranks: fold_sources over n elements at element offset off of every
// rank's slot, this rank's own operand read at own instead (its input).
template <typename T, typename Op>
__device__ __forceinline__ void fold_ranks(const node_args &a, u64 off, u64 n, u64 own, u64 dst0, u64 dst1)
{
    u64 src[GORING_NODE_MAX_RANKS];
    for (unsigned q = 0; q < a.nranks; q++) src[q] = q == a.rank ? own : slot(a, q) + off * sizeof(T);
    fold_sources<T, Op>(src, a.nranks, n, dst0, dst1);
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
    fold_ranks<T, Op>(a, off, n, slot(a, a.rank) + off * sz, a.out + off * sz, 0);
}

// chunk_stride: devsync.ChunkStride, the distance between the regions of
// a slot laid out one chunk per rank.
__device__ __forceinline__ u64 chunk_stride(u64 count, u64 parts, u64 align)
{
    u64 per = (count + parts - 1) / parts;
    return (per + align - 1) / align * align;
}

// Two-shot allreduce (devsync/plan_allreduce_twoshot.go): part blockIdx.x
// of chunk q: its element offset in the vector (*off) and in a region of
// a slot (*in), and its length.
__device__ __forceinline__ void twoshot_part(const node_args &a, unsigned q, u64 vec, u64 *off, u64 *in, u64 *n)
{
    u64 co, cn;
    part(a.count, a.nranks, q, vec, &co, &cn);
    part(cn, gridDim.x, blockIdx.x, vec, in, n);
    *off = co + *in;
}

template <typename T, typename Op> __device__ void twoshot(const node_args &a)
{
    const u64 sz = sizeof(T), vec = 16 / sizeof(T), stride = chunk_stride(a.count, a.nranks, vec) * sz;
    u64       src[GORING_NODE_MAX_RANKS], dst[GORING_NODE_MAX_RANKS], nb[GORING_NODE_MAX_RANKS];
    u64       off, in, n;
    // 1. This block's part of every peer's chunk, stored straight from the
    // input into this rank's region of the peer's slot, all peers at once
    // (from rank+1 on, so that no two ranks start on the same peer).
    unsigned np = 0;
    for (unsigned i = 1; i < a.nranks; i++) {
        unsigned q = (a.rank + i) % a.nranks;
        twoshot_part(a, q, vec, &off, &in, &n);
        src[np] = a.in + off * sz;
        dst[np] = slot(a, q) + a.rank * stride + in * sz;
        nb[np]  = n * sz;
        np++;
    }
    copy_pairs(src, dst, nb, np);
    signal_stored(a, 0);
    if (!wait(a, 0)) return;
    // 3. The own chunk, from the peers' regions of the own slot and the
    // own input, in rank order; into the own region (peers read it after
    // phase 1) and the output.
    twoshot_part(a, a.rank, vec, &off, &in, &n);
    for (unsigned q = 0; q < a.nranks; q++) src[q] = q == a.rank ? a.in + off * sz : slot(a, a.rank) + q * stride + in * sz;
    fold_sources<T, Op>(src, a.nranks, n, slot(a, a.rank) + a.rank * stride + in * sz, a.out + off * sz);
    signal(a, 1);
    if (!wait(a, 1)) return;
    // 5. Every peer's reduced chunk, loaded from its own region of its
    // slot, all peers at once.
    np = 0;
    for (unsigned i = 1; i < a.nranks; i++) {
        unsigned q = (a.rank + i) % a.nranks;
        twoshot_part(a, q, vec, &off, &in, &n);
        src[np] = slot(a, q) + q * stride + in * sz;
        dst[np] = a.out + off * sz;
        nb[np]  = n * sz;
        np++;
    }
    copy_pairs(src, dst, nb, np);
}

// Reduce-scatter by stores (devsync/plan_reduce_scatter.go): the input is
// nranks blocks of count elements, stride apart; the output is block rank
// reduced. Rank q's slot holds rank p's piece of block q at element
// p*count.
template <typename T, typename Op> __device__ void reduce_scatter(const node_args &a)
{
    const u64 sz = sizeof(T), vec = 16 / sizeof(T);
    u64       off, n;
    part(a.count, gridDim.x, blockIdx.x, vec, &off, &n);
    // This block's part of every peer's block, stored straight from the
    // input into the peer's slot, all peers at once.
    u64      src[GORING_NODE_MAX_RANKS], dst[GORING_NODE_MAX_RANKS], nb[GORING_NODE_MAX_RANKS];
    unsigned np = 0;
    for (unsigned i = 1; i < a.nranks; i++) {
        unsigned q = (a.rank + i) % a.nranks;
        src[np]    = a.in + (q * a.stride + off) * sz;
        dst[np]    = slot(a, q) + (a.rank * a.count + off) * sz;
        nb[np]     = n * sz;
        np++;
    }
    copy_pairs(src, dst, nb, np);
    signal_stored(a, 0);
    if (!wait(a, 0)) return;
    for (unsigned q = 0; q < a.nranks; q++)
        src[q] = q == a.rank ? a.in + (q * a.stride + off) * sz : slot(a, a.rank) + (q * a.count + off) * sz;
    fold_sources<T, Op>(src, a.nranks, n, a.out + off * sz, 0);
}

// Allgather by stores (devsync/plan_allgather.go), on bytes: count is each
// rank's input in bytes.
__device__ __forceinline__ void allgather(const node_args &a)
{
    u64 off, n;
    part(a.count, gridDim.x, blockIdx.x, 16, &off, &n);
    u64 dst[GORING_NODE_MAX_RANKS];
    for (unsigned q = 0; q < a.nranks; q++) dst[q] = slot(a, q) + a.rank * a.count + off;
    copy_to(dst, a.nranks, a.in + off, n);
    signal_stored(a, 0); // stored into the peers' slots, as the ordering rule above says
    if (!wait(a, 0)) return;
    for (unsigned q = 0; q < a.nranks; q++) {
        u64 o = q * a.count + off;
        copy1(a.out + o, slot(a, a.rank) + o, n);
    }
}

// Bcast by stores (devsync/plan_bcast.go), on bytes: count is the
// message in bytes. The root stores straight from its input into every
// other rank's slot; a reader copies its slot into its output. A reader
// never signals the root after reading, so it first tells the root it
// is ready for this call (it has finished the last one, and with it any
// read of the slot the root is about to overwrite).
__device__ __forceinline__ void bcast(const node_args &a)
{
    u64 off, n;
    part(a.count, gridDim.x, blockIdx.x, 16, &off, &n);
    if (a.rank != a.root) {
        signal(a, 0, a.root);
        if (!wait(a, 1, a.root)) return;
        copy1(a.out + off, slot(a, a.rank) + off, n);
        return;
    }
    if (!wait(a, 0)) return;
    u64      dst[GORING_NODE_MAX_RANKS];
    unsigned nd = 0;
    if (a.out != a.in) dst[nd++] = a.out + off; // UCC's bcast is in place: nothing to copy
    for (unsigned q = 0; q < a.nranks; q++)
        if (q != a.rank) dst[nd++] = slot(a, q) + off;
    copy_to(dst, nd, a.in + off, n);
    signal_stored(a, 1);
}

// The LL protocol (devsync/ll.go): data in 16-byte lines of two 8-byte
// words, each 4 payload bytes and the call's tag, stored into the
// reader's LL area with one vector store; the reader polls a line of its
// own memory until both words hold the tag. An aligned 8-byte access is
// single-copy atomic, so a word holding the tag holds its payload too:
// no flag, no fence, one crossing of NVLink. Rank p's lines for rank q
// go to region p of q's area of the call's parity, line w of the payload
// at 16*w; a region's payload is the call's per-rank bytes rounded to 16.

// ll_tag: devsync.LLTag, never 0 (a cleared line).
__device__ __forceinline__ unsigned ll_tag(u64 epoch) { return (unsigned)(epoch % 0xffffffffull) + 1; }

// ll_region_bytes: the payload of one source's region.
__device__ __forceinline__ u64 ll_region_bytes(u64 bytes) { return (bytes + 15) / 16 * 16; }

// ll_line: line w of source src's region in owner's LL area.
__device__ __forceinline__ u64 *ll_line(const node_args &a, unsigned owner, unsigned src, u64 region, u64 w)
{
    return reinterpret_cast<u64 *>(a.peer[owner] + GORING_NODE_FLAG_BYTES + (a.epoch & 1) * GORING_NODE_LL_BYTES +
                                   src * 2 * region + w * 16);
}

// ll_sent: every thread, after its lines' stores and before it polls:
// the fence sends the stores on their way before the thread spins on
// loads (a store to pinned memory was seen to wait behind a spinning
// thread's loads: finish), while the peer's lines cross. It costs about
// 1 µs a call on two H200s (docs/gpu.md "Tagged lines for small node
// calls"); it was added against slow calls whose cause turned out to be
// the abort word's reads (ll_wait), and has not been timed without them.
__device__ __forceinline__ void ll_sent() { __threadfence_system(); }

__device__ __forceinline__ void ll_store(u64 *line, u64 x, unsigned tag)
{
    const u64 t = (u64)tag << 32;
    asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(line), "l"(t | (x & 0xffffffffull)), "l"(t | (x >> 32))
                 : "memory");
}

// ll_wait: the payload of a line once both its words hold tag; false if
// the abort word was set first. Every thread of an LL kernel polls, not
// one a peer as for a flag, so each looks at the abort word (a load over
// PCIe from the host's memory) only every GORING_LL_ABORT_EVERY polls:
// thousands of threads reading one host word every 64 polls queue their
// reads at the host, and a call whose peer was a few µs late took
// 30-240 µs, in proportion to its threads (docs/gpu.md "Tagged lines for
// small node calls"). A poll of local memory takes well under a µs, so a
// dead peer is still seen within milliseconds.
#define GORING_LL_ABORT_EVERY 8192
__device__ __forceinline__ bool ll_wait(const node_args &a, const u64 *line, unsigned tag, u64 *x)
{
    for (unsigned spins = 1;; spins++) {
        u64 lo, hi;
        asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(lo), "=l"(hi) : "l"(line) : "memory");
        if ((unsigned)(lo >> 32) == tag && (unsigned)(hi >> 32) == tag) {
            *x = (lo & 0xffffffffull) | (hi << 32);
            return true;
        }
        if (spins % GORING_LL_ABORT_EVERY == 0 && aborted(a)) return false;
    }
}

// ll_ended: every thread of the CTA, after its waits: false (for all)
// where the abort word stopped one, the status word then set as wait's.
__device__ __forceinline__ bool ll_ended(const node_args &a, int stopped)
{
    if (__syncthreads_or(stopped)) {
        if (threadIdx.x == 0 && a.status != 0) *reinterpret_cast<volatile u64 *>(a.status) = a.epoch;
        return false;
    }
    return true;
}

// ld_word, st_word: word w (8 bytes) of the buffer at base, as one 8-byte
// access where the buffer is 8-byte aligned (al), else byte by byte: a
// caller's buffer may start at any byte (team/aligned.go), and every rank
// must run the call its peers run.
__device__ __forceinline__ u64 ld_word(u64 base, u64 w, bool al)
{
    if (al) return reinterpret_cast<const u64 *>(base)[w];
    const unsigned char *p = reinterpret_cast<const unsigned char *>(base) + 8 * w;
    u64                  x = 0;
#pragma unroll
    for (unsigned k = 0; k < 8; k++) x |= (u64)p[k] << (8 * k);
    return x;
}

__device__ __forceinline__ void st_word(u64 base, u64 w, u64 x, bool al)
{
    if (al) {
        reinterpret_cast<u64 *>(base)[w] = x;
        return;
    }
    unsigned char *p = reinterpret_cast<unsigned char *>(base) + 8 * w;
#pragma unroll
    for (unsigned k = 0; k < 8; k++) p[k] = (unsigned char)(x >> (8 * k));
}

// ll_fold: words [w0, w0+nw) of every rank's operand, rank 0 first: the
// own one from own (this rank's input), a peer's from its region of the
// own LL area; into out.
template <typename T, typename Op>
__device__ __forceinline__ void ll_fold(const node_args &a, u64 own, u64 region, u64 w0, u64 nw, unsigned tag, bool al)
{
    Op  op;
    int stopped = 0;
    for (u64 i = threadIdx.x; i < nw && !stopped; i += blockDim.x) {
        vec8<T> acc, v;
        for (unsigned q = 0; q < a.nranks && !stopped; q++) {
            if (q == a.rank) v.raw = ld_word(own, w0 + i, al);
            else if (!ll_wait(a, ll_line(a, a.rank, q, region, w0 + i), tag, &v.raw)) stopped = 1;
            if (q == 0) acc.raw = v.raw;
            else
#pragma unroll
                for (unsigned k = 0; k < 8 / sizeof(T); k++) acc.lane[k] = op(acc.lane[k], v.lane[k]);
        }
        if (!stopped) st_word(a.out, w0 + i, acc.raw, al);
    }
    ll_ended(a, stopped);
}

// LL one-shot allreduce (devsync/plan_ll_allreduce.go): count elements,
// count*sizeof(T) a multiple of 8.
template <typename T, typename Op> __device__ void ll_oneshot(const node_args &a)
{
    const u64 sz = sizeof(T);
    u64       off, n;
    part(a.count, gridDim.x, blockIdx.x, 16 / sz, &off, &n);
    const u64      region = ll_region_bytes(a.count * sz), w0 = off * sz / 8, nw = n * sz / 8;
    const unsigned tag = ll_tag(a.epoch);
    const bool     al  = ((a.in | a.out) & 7) == 0;
    for (u64 i = threadIdx.x; i < nw; i += blockDim.x) {
        const u64 x = ld_word(a.in, w0 + i, al);
        for (unsigned q = 0; q < a.nranks; q++)
            if (q != a.rank) ll_store(ll_line(a, q, a.rank, region, w0 + i), x, tag);
    }
    ll_sent();
    ll_fold<T, Op>(a, a.in, region, w0, nw, tag, al);
}

// LL reduce-scatter (devsync/plan_ll_reduce_scatter.go): blocks of count
// elements stride apart, both multiples of 8 bytes.
template <typename T, typename Op> __device__ void ll_reduce_scatter(const node_args &a)
{
    const u64 sz = sizeof(T);
    u64       off, n;
    part(a.count, gridDim.x, blockIdx.x, 16 / sz, &off, &n);
    const u64      region = ll_region_bytes(a.count * sz), w0 = off * sz / 8, nw = n * sz / 8, block = a.stride * sz / 8;
    const unsigned tag = ll_tag(a.epoch);
    const bool     al  = ((a.in | a.out) & 7) == 0;
    for (u64 i = threadIdx.x; i < nw; i += blockDim.x)
        for (unsigned q = 0; q < a.nranks; q++)
            if (q != a.rank) ll_store(ll_line(a, q, a.rank, region, w0 + i), ld_word(a.in, q * block + w0 + i, al), tag);
    ll_sent();
    ll_fold<T, Op>(a, a.in + a.rank * block * 8, region, w0, nw, tag, al);
}

// LL allgather (devsync/plan_ll_allgather.go), on bytes: count is each
// rank's input in bytes, a multiple of 8.
__device__ __forceinline__ void ll_allgather(const node_args &a)
{
    u64 off, n;
    part(a.count, gridDim.x, blockIdx.x, 16, &off, &n);
    const u64      region = ll_region_bytes(a.count), w0 = off / 8, nw = n / 8, block = a.count / 8;
    const unsigned tag = ll_tag(a.epoch);
    const bool     al  = ((a.in | a.out) & 7) == 0;
    for (u64 i = threadIdx.x; i < nw; i += blockDim.x) {
        const u64 x = ld_word(a.in, w0 + i, al);
        st_word(a.out, a.rank * block + w0 + i, x, al);
        for (unsigned q = 0; q < a.nranks; q++)
            if (q != a.rank) ll_store(ll_line(a, q, a.rank, region, w0 + i), x, tag);
    }
    ll_sent();
    int stopped = 0;
    for (u64 i = threadIdx.x; i < nw && !stopped; i += blockDim.x)
        for (unsigned q = 0; q < a.nranks && !stopped; q++) {
            u64 x;
            if (q == a.rank) continue;
            if (ll_wait(a, ll_line(a, a.rank, q, region, w0 + i), tag, &x)) st_word(a.out, q * block + w0 + i, x, al);
            else stopped = 1;
        }
    ll_ended(a, stopped);
}

} // namespace

extern "C" __global__ void __launch_bounds__(GORING_NODE_MAX_THREADS) goring_node_allgather(node_args a)
{
    serve(a, [](const node_args &x) { allgather(x); });
}

extern "C" __global__ void __launch_bounds__(GORING_NODE_MAX_THREADS) goring_node_bcast(node_args a)
{
    serve(a, [](const node_args &x) { bcast(x); });
}

extern "C" __global__ void __launch_bounds__(GORING_NODE_MAX_THREADS) goring_node_ll_allgather(node_args a)
{
    serve(a, [](const node_args &x) { ll_allgather(x); });
}

// goring_node_{oneshot,twoshot,reduce_scatter,ll_oneshot,ll_reduce_scatter}_<dtype>_<op>. Every call
// ends with finish, whether it completed or an abort stopped it; a
// resident kernel then takes the next (serve).
#define GORING_NODE_KERNELS(name, T, Op)                                                                    \
    extern "C" __global__ void __launch_bounds__(GORING_NODE_MAX_THREADS)                                 \
        goring_node_oneshot_##name(node_args a) { serve(a, [](const node_args &x) { oneshot<T, Op>(x); }); } \
    extern "C" __global__ void __launch_bounds__(GORING_NODE_MAX_THREADS)                                 \
        goring_node_twoshot_##name(node_args a) { serve(a, [](const node_args &x) { twoshot<T, Op>(x); }); } \
    extern "C" __global__ void __launch_bounds__(GORING_NODE_MAX_THREADS)                                 \
        goring_node_reduce_scatter_##name(node_args a) { serve(a, [](const node_args &x) { reduce_scatter<T, Op>(x); }); } \
    extern "C" __global__ void __launch_bounds__(GORING_NODE_MAX_THREADS)                                 \
        goring_node_ll_oneshot_##name(node_args a) { serve(a, [](const node_args &x) { ll_oneshot<T, Op>(x); }); } \
    extern "C" __global__ void __launch_bounds__(GORING_NODE_MAX_THREADS)                                 \
        goring_node_ll_reduce_scatter_##name(node_args a) { serve(a, [](const node_args &x) { ll_reduce_scatter<T, Op>(x); }); }

GORING_FOR_EACH_REDUCTION(GORING_NODE_KERNELS)
