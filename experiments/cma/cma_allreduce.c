/*
 * cma_allreduce: a measurement, not part of goring. P processes of one
 * host (forked) run a float32 sum allreduce by Linux cross-memory reads
 * (process_vm_readv), as docs/ucc.md "Lanes on a host with cores to
 * spare" describes: rank r reduces block r of every rank's input, in rank
 * order and in pieces small enough to stay in cache, into its result;
 * then it reads the other blocks of the other ranks' results into its
 * own. T threads a rank split each phase. The ranks meet through flags
 * in shared memory. Every result is checked.
 *
 *   cma_allreduce P BYTES [T [ITERS]]   # average us per call after 5 warm-up calls
 *   cma_allreduce readv BYTES           # process_vm_readv against memcpy, one process pair
 *
 *   gcc -O3 -march=x86-64-v2 -pthread experiments/cma/cma_allreduce.c -o cma_allreduce
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MAX_THREADS = 16, PIECE = 128 << 10 };

typedef struct {
    pid_t pid;
    float *src, *dst;
    atomic_int phase;
} slot_t;

static slot_t *S; /* one slot a rank, in memory every rank shares */
static int P, R, T;
static size_t N; /* floats per rank */

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* arrive: this rank is at phase ph; wait until every rank is. */
static void arrive(int ph)
{
    atomic_store(&S[R].phase, ph);
    for (int q = 0; q < P; q++)
        while (atomic_load(&S[q].phase) < ph)
            sched_yield();
}

static void readv_from(pid_t pid, void *local, const void *remote, size_t n)
{
    struct iovec l = {local, n}, r = {(void *)remote, n};
    if (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)n) {
        perror("process_vm_readv");
        exit(1);
    }
}

typedef struct { size_t lo, hi; } range_t; /* floats */

/* reduce: block r's range [lo, hi) of every rank's input, in rank order. */
static void *reduce_range(void *arg)
{
    const range_t *g = arg;
    float *piece = aligned_alloc(64, PIECE);
    for (size_t off = g->lo; off < g->hi; off += PIECE / 4) {
        size_t n = g->hi - off < PIECE / 4 ? g->hi - off : PIECE / 4;
        float *acc = S[R].dst + off;
        if (R == 0)
            memcpy(acc, S[0].src + off, n * 4);
        else
            readv_from(S[0].pid, acc, S[0].src + off, n * 4);
        for (int q = 1; q < P; q++) {
            const float *in = S[R].src + off;
            if (q != R) {
                readv_from(S[q].pid, piece, S[q].src + off, n * 4);
                in = piece;
            }
            for (size_t i = 0; i < n; i++)
                acc[i] += in[i];
        }
    }
    free(piece);
    return NULL;
}

/* gather: range [lo, hi) of every other rank's block of its result. */
static void *gather_range(void *arg)
{
    const range_t *g = arg;
    size_t block = N / P;
    for (int q = 0; q < P; q++)
        if (q != R)
            readv_from(S[q].pid, S[R].dst + q * block + g->lo, S[q].dst + q * block + g->lo,
                       (g->hi - g->lo) * 4);
    return NULL;
}

static void on_threads(void *(*f)(void *), size_t lo, size_t hi)
{
    pthread_t th[MAX_THREADS];
    range_t g[MAX_THREADS];
    size_t part = (hi - lo) / T;
    for (int t = 0; t < T; t++) {
        g[t].lo = lo + t * part;
        g[t].hi = t == T - 1 ? hi : lo + (t + 1) * part;
        if (T == 1)
            f(&g[t]);
        else
            pthread_create(&th[t], NULL, f, &g[t]);
    }
    for (int t = 0; T > 1 && t < T; t++)
        pthread_join(th[t], NULL);
}

static int readv_rate(size_t bytes)
{
    char *b = malloc(bytes);
    memset(b, 7, bytes);
    pid_t parent = getpid(), child = fork();
    if (child == 0) {
        char *d = malloc(bytes), *e = malloc(bytes);
        memset(d, 0, bytes);
        memset(e, 0, bytes);
        for (int k = 0; k < 5; k++) {
            double t0 = now_us();
            readv_from(parent, d, b, bytes);
            double t1 = now_us();
            memcpy(e, d, bytes);
            double t2 = now_us();
            printf("%zu bytes: process_vm_readv %.1f us, memcpy %.1f us\n", bytes, t1 - t0, t2 - t1);
        }
        fflush(stdout);
        _exit(d[bytes - 1] == 7 ? 0 : 1);
    }
    int st;
    waitpid(child, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "readv") == 0)
        return readv_rate(strtoul(argv[2], NULL, 10));
    if (argc < 3) {
        fprintf(stderr, "usage: cma_allreduce P BYTES [THREADS [ITERS]] | cma_allreduce readv BYTES\n");
        return 2;
    }
    P = atoi(argv[1]);
    N = strtoul(argv[2], NULL, 10) / 4;
    T = argc > 3 ? atoi(argv[3]) : 1;
    int iters = argc > 4 ? atoi(argv[4]) : 50;
    if (P < 1 || T < 1 || T > MAX_THREADS || iters < 1 || N == 0 || N % P != 0 || (N / P) < (size_t)T) {
        fprintf(stderr, "cma_allreduce: want 1 or more ranks, 1-%d threads, BYTES a multiple of 4*P\n", MAX_THREADS);
        return 2;
    }
    S = mmap(NULL, sizeof(slot_t) * P, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    for (R = 0; R < P; R++)
        if (fork() == 0)
            break;
    if (R == P) {
        int bad = 0, st;
        for (int i = 0; i < P; i++) {
            wait(&st);
            bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
        }
        return bad;
    }
    S[R].pid = getpid();
    S[R].src = aligned_alloc(4096, N * 4);
    S[R].dst = aligned_alloc(4096, N * 4);
    for (size_t i = 0; i < N; i++) {
        S[R].src[i] = R + i % 7;
        S[R].dst[i] = 0;
    }
    int ph = 0;
    double total = 0;
    size_t block = N / P;
    for (int it = 0; it < iters + 5; it++) {
        arrive(++ph); /* every rank's buffers are there */
        double t0 = now_us();
        on_threads(reduce_range, R * block, (R + 1) * block);
        arrive(++ph); /* every block is reduced */
        on_threads(gather_range, 0, block);
        arrive(++ph); /* nobody reads this rank's buffers any more */
        if (it >= 5)
            total += now_us() - t0;
    }
    for (size_t i = 0; i < N; i++) {
        float want = P * (P - 1) / 2 + P * (float)(i % 7);
        if (S[R].dst[i] != want) {
            printf("rank %d: element %zu = %g, want %g\n", R, i, S[R].dst[i], want);
            return 1;
        }
    }
    if (R == 0)
        printf("P=%d bytes=%zu T=%d direct allreduce %.1f us\n", P, N * 4, T, total / iters);
    return 0;
}
