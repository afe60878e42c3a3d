// ring_latency.cu: how long the host takes to hand work to a GPU and see
// it done, three ways, on one GPU: a kernel launched a call (it stores
// the call's number into pinned host memory, the host spins on it); a
// kernel that stays on the GPU and polls a doorbell word in pinned host
// memory; and one that polls a word in device memory that the host sets
// with a stream memory operation (cuStreamWriteValue64). Also the GPU's
// latency of one load of pinned host memory. Medians of ITERS round trips
// (µs), after a warm-up. And whether a memset on the legacy stream, waited
// for there, waits for a kernel that stays (a thread lets it go after 300
// ms).
//
//   nvcc -O2 -arch=sm_90 -o ring_latency ring_latency.cu -ldl && ./ring_latency [ITERS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <thread>
#include <vector>

typedef unsigned long long u64;
#define CK(x)                                                                   \
    do {                                                                        \
        cudaError_t e_ = (x);                                                   \
        if (e_ != cudaSuccess) {                                                \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));            \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

__device__ __forceinline__ u64 ld_acquire_sys(const u64 *p)
{
    u64 v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ u64 ld_volatile(const u64 *p)
{
    u64 v;
    asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_release_sys(u64 *p, u64 v)
{
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ u64 now_ns()
{
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void once(u64 *ack, u64 seq) { st_release_sys(ack, seq); }

// stay: polls *bell (acquire at system scope, or volatile) for seq = 1..n,
// acks each into *ack.
__global__ void stay(const u64 *bell, u64 *ack, u64 n, int acquire)
{
    for (u64 s = 1; s <= n; s++) {
        while ((acquire ? ld_acquire_sys(bell) : ld_volatile(bell)) < s) {
        }
        st_release_sys(ack, s);
    }
}

// chase: a chain of dependent loads of pinned memory: ns per load.
__global__ void chase(const u64 *next, int n, u64 *out)
{
    u64 i = 0, t0 = now_ns();
    for (int k = 0; k < n; k++) i = ld_volatile(next + i);
    out[0] = now_ns() - t0;
    out[1] = i;
}

// The call's six fields behind the doorbell, three ways. ring: pair k at
// words 2k, 2k+1 = (epoch, field k); pair 0's epoch is the doorbell.
// mode 0: thread 0 polls the doorbell, then loads the six fields itself;
// mode 1: then threads 0-5 load one field each; mode 2: threads 0-5 each
// poll their own pair with one 16-byte load (epoch and field together).
// With ctas > 1, CTA 0 passes the call through a device-memory mailbox to
// the others (release/acquire at GPU scope). Every CTA acks with the sum
// of the fields into its own word (a done word a CTA).
__global__ void fields(const u64 *ring, u64 *acks, u64 *box, u64 n, int mode)
{
    __shared__ u64 f[6];
    for (u64 s = 1; s <= n; s++) {
        if (blockIdx.x == 0) {
            const unsigned t = threadIdx.x;
            if (mode == 2) {
                if (t < 6) {
                    u64 e, v;
                    do {
                        asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(e), "=l"(v) : "l"(ring + 2 * t) : "memory");
                    } while (e < s);
                    f[t] = v;
                }
            } else {
                if (t == 0)
                    while (ld_acquire_sys(ring) < s) {
                    }
                __syncthreads();
                if (mode == 0 && t == 0)
                    for (int k = 0; k < 6; k++) f[k] = ld_volatile(ring + 2 * k + 1);
                if (mode == 1 && t < 6) f[t] = ld_volatile(ring + 2 * t + 1);
            }
            __syncthreads();
            if (t == 0 && gridDim.x > 1) {
                for (int k = 0; k < 6; k++) box[1 + k] = f[k];
                asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(box), "l"(s) : "memory");
            }
        } else {
            if (threadIdx.x == 0) {
                u64 v;
                do {
                    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(box) : "memory");
                } while (v < s);
                for (int k = 0; k < 6; k++) f[k] = ((volatile u64 *)box)[1 + k];
            }
        }
        __syncthreads();
        if (threadIdx.x == 0) st_release_sys(acks + 8 * blockIdx.x, s + f[0] + f[1] + f[2] + f[3] + f[4] + f[5]);
    }
}

// onceN: a launched kernel of ctas CTAs, each acking into its own word.
__global__ void onceN(u64 *acks, u64 seq)
{
    __syncthreads();
    if (threadIdx.x == 0) st_release_sys(acks + 8 * blockIdx.x, seq);
}

static double us(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

static void report(const char *name, std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    printf("%-44s median %7.2f us  p10 %7.2f  p90 %7.2f\n", name, v[v.size() / 2], v[v.size() / 10], v[v.size() * 9 / 10]);
}

int main(int argc, char **argv)
{
    const int iters = argc > 1 ? atoi(argv[1]) : 2000, warm = 200;
    CK(cudaSetDevice(0));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("%s, %d iterations\n", p.name, iters);
    u64 *h;
    CK(cudaHostAlloc(&h, 4096, cudaHostAllocMapped));
    volatile u64 *bell = h, *ack = h + 8;
    u64 *dh;
    CK(cudaHostGetDevicePointer(&dh, h, 0));
    cudaStream_t s, aux;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&aux, cudaStreamNonBlocking));
    std::vector<double> t;

    // 1. A launch a call.
    *ack = 0;
    for (int i = 1; i <= warm + iters; i++) {
        auto t0 = std::chrono::steady_clock::now();
        once<<<1, 32, 0, s>>>(dh + 8, i);
        while (*ack < (u64)i) {
        }
        if (i > warm) t.push_back(us(std::chrono::steady_clock::now() - t0));
    }
    report("launch, done word seen", t);
    CK(cudaStreamSynchronize(s));

    // 2, 3. A kernel that stays, polling pinned memory.
    for (int acquire = 1; acquire >= 0; acquire--) {
        t.clear();
        *bell = 0, *ack = 0;
        stay<<<1, 32, 0, s>>>(dh, dh + 8, warm + iters, acquire);
        for (int i = 1; i <= warm + iters; i++) {
            auto t0 = std::chrono::steady_clock::now();
            __atomic_store_n((u64 *)bell, (u64)i, __ATOMIC_SEQ_CST);
            while (*ack < (u64)i) {
            }
            if (i > warm) t.push_back(us(std::chrono::steady_clock::now() - t0));
        }
        CK(cudaStreamSynchronize(s));
        report(acquire ? "resident, polls pinned memory (ld.acquire.sys)" : "resident, polls pinned memory (ld.volatile)", t);
    }

    // 4. A kernel that stays, polling device memory set by cuStreamWriteValue64.
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    typedef CUresult (*wv_t)(CUstream, CUdeviceptr, cuuint64_t, unsigned);
    wv_t wv = lib ? (wv_t)dlsym(lib, "cuStreamWriteValue64_v2") : nullptr;
    if (wv == nullptr && lib) wv = (wv_t)dlsym(lib, "cuStreamWriteValue64");
    u64 *dbell;
    CK(cudaMalloc(&dbell, 64));
    CK(cudaMemset(dbell, 0, 64));
    if (wv) {
        t.clear();
        std::vector<double> call;
        *ack = 0;
        stay<<<1, 32, 0, s>>>(dbell, dh + 8, warm + iters, 1);
        for (int i = 1; i <= warm + iters; i++) {
            auto t0 = std::chrono::steady_clock::now();
            CUresult r = wv((CUstream)aux, (CUdeviceptr)dbell, (cuuint64_t)i, 0);
            auto t1 = std::chrono::steady_clock::now();
            if (r != CUDA_SUCCESS) {
                printf("cuStreamWriteValue64: error %d\n", r);
                exit(1);
            }
            while (*ack < (u64)i) {
            }
            if (i > warm) t.push_back(us(std::chrono::steady_clock::now() - t0)), call.push_back(us(t1 - t0));
        }
        CK(cudaStreamSynchronize(s));
        report("resident, device word by cuStreamWriteValue64", t);
        report("  of which the host's cuStreamWriteValue64", call);
    } else {
        printf("no cuStreamWriteValue64 in libcuda.so.1\n");
    }

    // 4b. The call's fields, three ways, 1 CTA of 32 and 4 CTAs of 512.
    {
        u64 *rh, *drh, *ah, *dah, *box;
        CK(cudaHostAlloc(&rh, 4096, cudaHostAllocMapped));
        CK(cudaHostGetDevicePointer(&drh, rh, 0));
        CK(cudaHostAlloc(&ah, 4096, cudaHostAllocMapped));
        CK(cudaHostGetDevicePointer(&dah, ah, 0));
        CK(cudaMalloc(&box, 64));
        const char *names[] = {"fields: poll, then thread 0 loads 6", "fields: poll, then 6 threads load 1", "fields: 6 threads poll (epoch, field) pairs"};
        for (int ctas = 1; ctas <= 4; ctas += 3) {
            int threads = ctas == 1 ? 32 : 512;
            t.clear();
            for (int i = 1; i <= warm + iters; i++) {
                auto t0 = std::chrono::steady_clock::now();
                onceN<<<ctas, threads, 0, s>>>(dah, i);
                for (int b = 0; b < ctas; b++)
                    while (((volatile u64 *)ah)[8 * b] < (u64)i) {
                    }
                if (i > warm) t.push_back(us(std::chrono::steady_clock::now() - t0));
            }
            CK(cudaStreamSynchronize(s));
            char nm[96];
            snprintf(nm, sizeof nm, "launch, %d CTAs of %d, done words seen", ctas, threads);
            report(nm, t);
            for (int mode = 0; mode < 3; mode++) {
                memset(rh, 0, 4096), memset(ah, 0, 4096);
                CK(cudaMemset(box, 0, 64));
                CK(cudaDeviceSynchronize());
                t.clear();
                fields<<<ctas, threads, 0, s>>>(drh, dah, box, warm + iters, mode);
                for (int i = 1; i <= warm + iters; i++) {
                    auto t0 = std::chrono::steady_clock::now();
                    for (int k = 5; k >= 0; k--) {
                        __atomic_store_n(&rh[2 * k + 1], (u64)(k + 1), __ATOMIC_SEQ_CST);
                        __atomic_store_n(&rh[2 * k], (u64)i, __ATOMIC_SEQ_CST);
                    }
                    const u64 want = i + 21;
                    for (int b = 0; b < ctas; b++)
                        while (((volatile u64 *)ah)[8 * b] < want) {
                        }
                    if (i > warm) t.push_back(us(std::chrono::steady_clock::now() - t0));
                }
                CK(cudaStreamSynchronize(s));
                snprintf(nm, sizeof nm, "resident %s, %d CTAs", names[mode], ctas);
                report(nm, t);
            }
        }
    }

    // 5. The GPU's latency of a load of pinned memory.
    u64 *out;
    CK(cudaHostAlloc(&out, 64, cudaHostAllocMapped));
    u64 *dout;
    CK(cudaHostGetDevicePointer(&dout, out, 0));
    for (int k = 0; k < 512; k++) h[64 + k] = 64 + (k + 1) % 512;
    h[0] = 64;
    t.clear();
    for (int r = 0; r < 21; r++) {
        chase<<<1, 1, 0, s>>>(dh, 200, dout);
        CK(cudaStreamSynchronize(s));
        t.push_back(out[0] / 200.0 / 1e3);
    }
    report("GPU load of pinned host memory (one, dependent)", t);
    // 6. A memset of device memory while a kernel stays, on the legacy
    // stream and waited for there (cudaMemset returns before it runs):
    // does it wait for the kernel?
    *bell = 0, *ack = 0;
    stay<<<1, 32, 0, s>>>(dh, dh + 8, 1, 1);
    std::thread late([&] { std::this_thread::sleep_for(std::chrono::milliseconds(300)); __atomic_store_n((u64 *)bell, (u64)1, __ATOMIC_SEQ_CST); });
    auto t0 = std::chrono::steady_clock::now();
    CK(cudaMemset(dbell, 0, 64));
    CK(cudaStreamSynchronize(0));
    double m = us(std::chrono::steady_clock::now() - t0);
    bool waited = *ack != 0;
    late.join();
    CK(cudaStreamSynchronize(s));
    printf("cudaMemset + legacy-stream sync beside a staying kernel: %.1f us, %s\n", m, waited ? "after it left" : "while it stayed");
    return 0;
}
