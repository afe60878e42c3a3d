/*
 * gpu_pause: what a small GPU collective costs through goring.h when the
 * calling thread spent a while elsewhere first, as an application that
 * computes between collectives: each call is made, posted, polled to its
 * end and finalized (as Open MPI's coll/ucc does), after every rank
 * busy-waited PAUSE_US in C; and the same calls back to back. Medians of
 * rank 0, and every result checked.
 *
 *   gpu_pause CALLS PAUSE_US COUNT [context options] [busy]
 *
 * busy: during each pause the rank keeps its GPU at work (a 4-byte memset
 * on a stream of its own every 50 us), as an application whose kernels
 * run between collectives: what is left of the cost after a pause is then
 * the host's, not the idle GPU's.
 *
 * Build where CUDA is (experiments/gpupause/run.sh does):
 *   mpicc -O2 -I$CUDA/include -Iucc_tl_goring experiments/gpupause/gpu_pause.c \
 *     -L$CUDA/lib64 -lcudart -Lbuild -lgoring -o gpu_pause
 */
#define HARNESS_NAME "gpu_pause"
#include <cuda_runtime.h>
#include <sched.h>
#include <string.h>

#include "../../tests/capi/harness.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* one allreduce of count floats on device buffers, made, posted, polled
 * and finalized; ph gets the time of goring_coll_init, of the post and of
 * the polls (us). */
static double call(goring_team_h team, float *src, float *dst, size_t count, double ph[3])
{
    goring_coll_args_t a = {.coll = GORING_COLL_ALLREDUCE, .src = src, .dst = dst, .count = count,
                            .dtype = GORING_DT_FLOAT32, .op = GORING_OP_SUM, .mem = GORING_MEM_CUDA};
    goring_coll_h   coll;
    double          t0 = MPI_Wtime();
    goring_status_t st = goring_coll_init(team, &a, &coll);
    double          t1 = MPI_Wtime();
    if (st != GORING_OK) die_status("init", st);
    if ((st = goring_coll_post(coll)) != GORING_OK) die_status("post", st);
    double t2 = MPI_Wtime();
    while ((st = goring_coll_test(coll)) == GORING_INPROGRESS)
        ;
    double t3 = MPI_Wtime();
    if (st != GORING_OK) die_status("test", st);
    goring_coll_finalize(coll);
    ph[0] = (t1 - t0) * 1e6;
    ph[1] = (t2 - t1) * 1e6;
    ph[2] = (t3 - t2) * 1e6;
    return (MPI_Wtime() - t0) * 1e6;
}

static void check(const float *dst, size_t count, float *host)
{
    if (cudaMemcpy(host, dst, count * 4, cudaMemcpyDeviceToHost) != cudaSuccess) {
        CHECK(0, "cudaMemcpy back failed");
        return;
    }
    float want = size * (size + 1) / 2.0f;
    for (size_t k = 0; k < count; k++)
        if (host[k] != want) {
            CHECK(0, "element %zu = %g, want %g", k, host[k], want);
            return;
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int    calls = argc > 1 ? atoi(argv[1]) : 200;
    int    pause = argc > 2 ? atoi(argv[2]) : 5000;
    size_t count = argc > 3 ? (size_t)atol(argv[3]) : 4096;
    const char *opts = argc > 4 ? argv[4] : "";
    int busy = argc > 5 && strcmp(argv[5], "busy") == 0;
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        fprintf(stderr, "gpu_pause: no CUDA device\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    cudaSetDevice(rank % ndev);
    float *src, *dst, *host = malloc(count * 4);
    cudaMalloc((void **)&src, count * 4);
    cudaMalloc((void **)&dst, count * 4);
    for (size_t k = 0; k < count; k++) host[k] = rank + 1;
    cudaMemcpy(src, host, count * 4, cudaMemcpyHostToDevice);
    void        *spare;
    cudaStream_t side;
    cudaMalloc(&spare, 4);
    cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);

    goring_context_h ctx;
    goring_status_t  st = goring_context_create(opts, &ctx);
    if (st != GORING_OK) die_status("context_create", st);
    goring_team_h team = mpi_team(ctx, rank, size, die_status);

    double *b2b = calloc(calls, 8), *paused = calloc(calls, 8), ignored[3];
    double *ph_b2b[3], *ph_paused[3];
    for (int k = 0; k < 3; k++) ph_b2b[k] = calloc(calls, 8), ph_paused[k] = calloc(calls, 8);
    double ph[3];
    for (int i = 0; i < 20; i++) call(team, src, dst, count, ignored); /* set-up, mappings */
    check(dst, count, host);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < calls; i++) {
        b2b[i] = call(team, src, dst, count, ph);
        for (int k = 0; k < 3; k++) ph_b2b[k][i] = ph[k];
    }
    check(dst, count, host);
    for (int i = 0; i < calls; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        for (double until = MPI_Wtime() + pause * 1e-6, next = 0; MPI_Wtime() < until;)
            if (busy && MPI_Wtime() >= next) {
                cudaMemsetAsync(spare, 0, 4, side);
                next = MPI_Wtime() + 50e-6;
            }
        if (busy) cudaStreamSynchronize(side);
        paused[i] = call(team, src, dst, count, ph);
        for (int k = 0; k < 3; k++) ph_paused[k][i] = ph[k];
    }
    check(dst, count, host);
    qsort(b2b, calls, 8, cmp_double);
    qsort(paused, calls, 8, cmp_double);
    for (int k = 0; k < 3; k++) {
        qsort(ph_b2b[k], calls, 8, cmp_double);
        qsort(ph_paused[k], calls, 8, cmp_double);
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("gpu_pause: %d ranks on %d GPU(s), %zu-float allreduce, options \"%s\": back to back %.1f us "
               "(init %.1f, post %.1f, polls %.1f), after %d us in C %.1f us (init %.1f, post %.1f, polls %.1f); "
               "medians of %d, p90 %.1f / %.1f%s; %s\n",
               size, ndev, count, opts, b2b[calls / 2], ph_b2b[0][calls / 2], ph_b2b[1][calls / 2],
               ph_b2b[2][calls / 2], pause, paused[calls / 2], ph_paused[0][calls / 2], ph_paused[1][calls / 2],
               ph_paused[2][calls / 2], calls, b2b[calls * 9 / 10], paused[calls * 9 / 10],
               busy ? "; the GPU kept at work during the pauses" : "",
               all ? "WRONG RESULTS" : "every result right");
    goring_team_destroy(team);
    goring_context_destroy(ctx);
    MPI_Finalize();
    return all ? 1 : 0;
}
