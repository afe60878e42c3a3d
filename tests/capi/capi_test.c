/*
 * capi_test: goring's C API (ucc_tl_goring/goring.h) under mpirun, without UCC.
 *
 * MPI stands in for UCC's out-of-band allgather: it gathers the team cards.
 * Each rank then runs every collective the team layer supports, polling
 * goring_coll_test as UCC's progress engine would, and checks the results
 * element by element (alltoall and alltoallv at odd counts with zeros,
 * packed and at gapped displacements, pairwise and nimble; reduce_scatter
 * in place too); then it runs many small calls back to back, and
 * checks that a device-memory call and an unknown algorithm are refused
 * with the right status, and that a call's algorithm name is read at init
 * only. Exit 0 only if every rank passed.
 *
 *   mpirun -np 4 build/capi_test [calls]
 */
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goring.h"
#define HARNESS_NAME "capi_test"
#include "harness.h"

/* C-path calls (cpath.c): a handle with the top bit set is one whose shape
 * the library lowered into its C executor on an earlier call. */
static long cpath_calls;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* phase_us: what the last run spent in init, post, the test loop and
 * finalize (us), and how many tests returned in progress; the paused
 * calls below report their medians (docs/ucc.md). */
enum { PH_INIT, PH_POST, PH_TEST, PH_FINALIZE, PH_POLLS, PHASES };
static double phase_us[PHASES];

/* run initialises, posts and polls one collective to completion. */
static void run(goring_team_h team, goring_coll_args_t *args, const char *what)
{
    goring_coll_h coll;
    double t0 = MPI_Wtime(), polls = 0;
    goring_status_t st = goring_coll_init(team, args, &coll);
    if (st != GORING_OK) die_status(what, st);
    cpath_calls += (coll >> 63) != 0;
    /* Host calls never go on a CUDA stream: refused, nothing posted (the
     * handle is never dereferenced), and the call posts as usual. */
    if ((st = goring_coll_post_stream(coll, (void *)0x1)) != GORING_ERR_NOT_SUPPORTED) {
        fprintf(stderr, "%s: goring_coll_post_stream on host memory: %d, want %d\n", what, st,
                GORING_ERR_NOT_SUPPORTED);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if ((st = goring_coll_prepare_stream(coll)) != GORING_ERR_NOT_SUPPORTED) {
        fprintf(stderr, "%s: goring_coll_prepare_stream on host memory: %d, want %d\n", what, st,
                GORING_ERR_NOT_SUPPORTED);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double t1 = MPI_Wtime();
    if ((st = goring_coll_post(coll)) != GORING_OK) die_status(what, st);
    double t2 = MPI_Wtime();
    while ((st = goring_coll_test(coll)) == GORING_INPROGRESS) {
        polls++;
        sched_yield(); /* as Open MPI's progress loop does when oversubscribed */
    }
    double t3 = MPI_Wtime();
    if (st != GORING_OK) die_status(what, st);
    goring_coll_finalize(coll);
    double t4 = MPI_Wtime();
    phase_us[PH_INIT] = (t1 - t0) * 1e6;
    phase_us[PH_POST] = (t2 - t1) * 1e6;
    phase_us[PH_TEST] = (t3 - t2) * 1e6;
    phase_us[PH_FINALIZE] = (t4 - t3) * 1e6;
    phase_us[PH_POLLS] = polls;
}

/* connect is the test's team over MPI_COMM_WORLD (harness.h). */
static goring_team_h connect(goring_context_h ctx) { return mpi_team(ctx, rank, size, die_status); }

static void test_allgather(goring_team_h team, size_t count, int in_place)
{
    uint8_t *src = malloc(count), *dst = malloc(count * size);
    for (size_t k = 0; k < count; k++) src[k] = (uint8_t)(rank * 29 + k);
    if (in_place) memcpy(dst + rank * count, src, count);
    goring_coll_args_t a = {.coll = GORING_COLL_ALLGATHER, .src = in_place ? NULL : src, .dst = dst,
                            .count = count, .dtype = GORING_DT_UINT8, .in_place = in_place, .mem = GORING_MEM_HOST};
    run(team, &a, "allgather");
    for (int q = 0; q < size; q++)
        for (size_t k = 0; k < count; k++)
            if (dst[q * count + k] != (uint8_t)(q * 29 + k)) {
                CHECK(0, "allgather count %zu in_place %d: block %d byte %zu wrong", count, in_place, q, k);
                q = size;
                break;
            }
    free(src);
    free(dst);
}

static void test_allreduce(goring_team_h team, size_t count, const char *alg)
{
    double *src = malloc(count * 8), *dst = malloc(count * 8);
    for (size_t k = 0; k < count; k++) src[k] = rank + (double)(k % 11);
    goring_coll_args_t a = {.coll = GORING_COLL_ALLREDUCE, .src = src, .dst = dst, .count = count,
                            .dtype = GORING_DT_FLOAT64, .op = GORING_OP_SUM, .mem = GORING_MEM_HOST, .alg = alg};
    run(team, &a, "allreduce");
    for (size_t k = 0; k < count; k++) {
        double want = size * (size - 1) / 2.0 + size * (double)(k % 11);
        if (dst[k] != want) {
            CHECK(0, "allreduce %s count %zu: element %zu = %g, want %g", alg ? alg : "default", count, k, dst[k], want);
            break;
        }
    }
    free(src);
    free(dst);
}

/* An allreduce whose buffers start off the element size's alignment, by
 * a different amount on each rank (MPI allows any address): every rank
 * runs the call and gets the sums. */
static void test_allreduce_misaligned(goring_team_h team, size_t count)
{
    size_t   skew = (size_t)(rank % 8);
    uint8_t *sraw = malloc(count * 8 + 8), *draw = malloc(count * 8 + 8);
    uint8_t *src = sraw + skew, *dst = draw + skew;
    for (size_t k = 0; k < count; k++) {
        double v = rank + (double)(k % 11);
        memcpy(src + 8 * k, &v, 8);
    }
    goring_coll_args_t a = {.coll = GORING_COLL_ALLREDUCE, .src = src, .dst = dst, .count = count,
                            .dtype = GORING_DT_FLOAT64, .op = GORING_OP_SUM, .mem = GORING_MEM_HOST};
    run(team, &a, "allreduce misaligned");
    for (size_t k = 0; k < count; k++) {
        double got, want = size * (size - 1) / 2.0 + size * (double)(k % 11);
        memcpy(&got, dst + 8 * k, 8);
        if (got != want) {
            CHECK(0, "allreduce count %zu, buffers %zu bytes past alignment: element %zu = %g, want %g", count, skew, k,
                  got, want);
            break;
        }
    }
    free(sraw);
    free(draw);
}

/* An in-place allreduce made once and posted three times, its buffer
 * written only after it was made and again before each post (a
 * persistent call's new data; a triggered call's input, written by work
 * queued ahead of it): every post reduces what the buffer holds then. */
static void test_allreduce_reposted(goring_team_h team, size_t count)
{
    double *buf = malloc(count * 8);
    for (size_t k = 0; k < count; k++) buf[k] = -1e9;
    goring_coll_args_t a = {.coll = GORING_COLL_ALLREDUCE, .dst = buf, .count = count, .in_place = 1,
                            .dtype = GORING_DT_FLOAT64, .op = GORING_OP_SUM, .mem = GORING_MEM_HOST};
    goring_coll_h coll;
    goring_status_t st = goring_coll_init(team, &a, &coll);
    if (st != GORING_OK) die_status("allreduce reposted: init", st);
    cpath_calls += (coll >> 63) != 0;
    for (int post = 0; post < 3; post++) {
        for (size_t k = 0; k < count; k++) buf[k] = rank + (double)(k % 11) + 100.0 * post;
        if ((st = goring_coll_post(coll)) != GORING_OK) die_status("allreduce reposted: post", st);
        while ((st = goring_coll_test(coll)) == GORING_INPROGRESS) sched_yield();
        if (st != GORING_OK) die_status("allreduce reposted: test", st);
        for (size_t k = 0; k < count; k++) {
            double want = size * (size - 1) / 2.0 + size * ((double)(k % 11) + 100.0 * post);
            if (buf[k] != want) {
                CHECK(0, "allreduce in place count %zu, post %d: element %zu = %g, want %g", count, post, k, buf[k], want);
                break;
            }
        }
    }
    goring_coll_finalize(coll);
    free(buf);
}

/* A call's arguments are read at init, its algorithm name too: here the
 * caller's name is overwritten between init and post. The small call is
 * posted while a large one is on the wire in Go, so where it was made in
 * C (cpath.c) it moves to Go at its post and is made there again. */
static void test_alg_read_at_init(goring_team_h team)
{
    size_t big = 1 << 20, small = 16;
    double *bsrc = malloc(big * 8), *bdst = malloc(big * 8), *src = malloc(small * 8), *dst = malloc(small * 8);
    char   *alg = malloc(32);
    for (size_t k = 0; k < big; k++) bsrc[k] = rank + (double)(k % 11);
    for (size_t k = 0; k < small; k++) src[k] = rank + (double)(k % 11);
    strcpy(alg, "ring");
    test_allreduce(team, small, alg); /* the shape lowered into C */
    goring_coll_args_t large = {.coll = GORING_COLL_ALLREDUCE, .src = bsrc, .dst = bdst, .count = big,
                                .dtype = GORING_DT_FLOAT64, .op = GORING_OP_SUM, .mem = GORING_MEM_HOST};
    goring_coll_args_t a = {.coll = GORING_COLL_ALLREDUCE, .src = src, .dst = dst, .count = small,
                            .dtype = GORING_DT_FLOAT64, .op = GORING_OP_SUM, .mem = GORING_MEM_HOST, .alg = alg};
    goring_coll_h   hl, hs;
    goring_status_t st;
    if ((st = goring_coll_init(team, &large, &hl)) != GORING_OK) die_status("alg read at init: large init", st);
    if ((st = goring_coll_init(team, &a, &hs)) != GORING_OK) die_status("alg read at init: init", st);
    strcpy(alg, "no_such_alg");
    if ((st = goring_coll_post(hl)) != GORING_OK) die_status("alg read at init: large post", st);
    st = goring_coll_post(hs);
    CHECK(st == GORING_OK, "allreduce whose algorithm name changed after init: post status %d", st);
    goring_status_t sl = GORING_INPROGRESS, ss = st == GORING_OK ? GORING_INPROGRESS : st;
    while (sl == GORING_INPROGRESS || ss == GORING_INPROGRESS) {
        if (sl == GORING_INPROGRESS) sl = goring_coll_test(hl);
        if (ss == GORING_INPROGRESS) ss = goring_coll_test(hs);
        sched_yield();
    }
    if (sl != GORING_OK) die_status("alg read at init: large test", sl);
    CHECK(ss == GORING_OK || st != GORING_OK, "allreduce whose algorithm name changed after init: status %d", ss);
    for (size_t k = 0; ss == GORING_OK && k < small; k++) {
        double want = size * (size - 1) / 2.0 + size * (double)(k % 11);
        if (dst[k] != want) {
            CHECK(0, "allreduce whose algorithm name changed after init: element %zu = %g, want %g", k, dst[k], want);
            break;
        }
    }
    goring_coll_finalize(hl);
    goring_coll_finalize(hs);
    free(bsrc);
    free(bdst);
    free(src);
    free(dst);
    free(alg);
}

/* reduce_scatter int32 min; in place (UCC's meaning), dst holds the whole
 * input and the result lands in this rank's block of it, the other blocks
 * keeping their input. */
static void test_reduce_scatter(goring_team_h team, size_t count, int in_place)
{
    int32_t *src = malloc(count * size * 4), *dst = in_place ? src : malloc(count * 4), *out;
    for (size_t k = 0; k < count * size; k++) src[k] = (int32_t)(rank * 100000 - (int32_t)k);
    goring_coll_args_t a = {.coll = GORING_COLL_REDUCE_SCATTER, .src = in_place ? NULL : src, .dst = dst,
                            .count = count, .dtype = GORING_DT_INT32, .op = GORING_OP_MIN,
                            .in_place = in_place, .mem = GORING_MEM_HOST};
    run(team, &a, "reduce_scatter");
    out = in_place ? dst + (size_t)rank * count : dst;
    for (size_t k = 0; k < count; k++) {
        int32_t want = -(int32_t)(rank * count + k);
        if (out[k] != want) {
            CHECK(0, "reduce_scatter count %zu in_place %d: element %zu = %d, want %d", count, in_place, k, out[k], want);
            break;
        }
    }
    for (size_t k = 0; in_place && k < count * size; k++) {
        if (k / count != (size_t)rank && src[k] != (int32_t)(rank * 100000 - (int32_t)k)) {
            CHECK(0, "reduce_scatter count %zu in place: input element %zu outside the rank's block changed", count, k);
            break;
        }
    }
    free(src);
    if (!in_place) free(dst);
}

/* a2a_count is how many elements rank i sends rank j in alltoallv case
 * seed: odd numbers, about a fifth zero, every rank's row different. */
static uint64_t a2a_count(int i, int j, size_t seed)
{
    uint64_t h = (uint64_t)i * 2654435761u + (uint64_t)j * 40503u + seed * 977u;
    return (h % 5 == 0) ? 0 : (h >> 3) % (seed + 1);
}

/* a2a_value is element k of the block rank i sends rank j. */
static int32_t a2a_value(int i, int j, uint64_t k)
{
    return (int32_t)((uint32_t)i * 1000003u + (uint32_t)j * 10007u + (uint32_t)k);
}

#define A2A_GAP 0x7eeeeeee /* dst elements no block covers keep it */

/* test_alltoallv runs alltoallv (uniform: alltoall with count elements per
 * peer) with counts from a2a_count, packed or at reversed displacements
 * with a gap of one element between blocks, and checks every element of
 * dst, gaps included. */
static void test_alltoallv(goring_team_h team, size_t seed, const char *alg, int gapped, int uniform)
{
    uint64_t *v = calloc(4 * (size_t)size, sizeof(uint64_t));
    uint64_t *scount = v, *rcount = v + size, *sdispl = v + 2 * size, *rdispl = v + 3 * size;
    uint64_t  slen = 0, rlen = 0;
    for (int j = 0; j < size; j++) {
        scount[j] = uniform ? seed : a2a_count(rank, j, seed);
        rcount[j] = uniform ? seed : a2a_count(j, rank, seed);
    }
    for (int j = gapped ? size - 1 : 0; gapped ? j >= 0 : j < size; j += gapped ? -1 : 1) {
        sdispl[j] = slen;
        rdispl[j] = rlen;
        slen += scount[j] + (gapped ? 1 : 0);
        rlen += rcount[j] + (gapped ? 1 : 0);
    }
    int32_t *src = malloc(slen * 4 + 4), *dst = malloc(rlen * 4 + 4);
    for (int j = 0; j < size; j++)
        for (uint64_t k = 0; k < scount[j]; k++) src[sdispl[j] + k] = a2a_value(rank, j, k);
    for (uint64_t k = 0; k < rlen; k++) dst[k] = A2A_GAP;
    goring_coll_args_t a = {.coll = uniform ? GORING_COLL_ALLTOALL : GORING_COLL_ALLTOALLV, .src = src,
                            .dst = dst, .count = uniform ? seed : 0, .dtype = GORING_DT_INT32,
                            .mem = GORING_MEM_HOST, .alg = alg};
    if (!uniform) {
        a.src_counts = scount;
        a.dst_counts = rcount;
        a.src_displs = gapped ? sdispl : NULL;
        a.dst_displs = gapped ? rdispl : NULL;
    }
    run(team, &a, uniform ? "alltoall" : "alltoallv");
    int32_t *want = malloc(rlen * 4 + 4);
    for (uint64_t k = 0; k < rlen; k++) want[k] = A2A_GAP;
    for (int i = 0; i < size; i++)
        for (uint64_t k = 0; k < rcount[i]; k++) want[rdispl[i] + k] = a2a_value(i, rank, k);
    for (uint64_t k = 0; k < rlen; k++)
        if (dst[k] != want[k]) {
            CHECK(0, "%s %s seed %zu gapped %d: element %llu = %d, want %d", uniform ? "alltoall" : "alltoallv",
                  alg ? alg : "default", seed, gapped, (unsigned long long)k, dst[k], want[k]);
            break;
        }
    free(want);
    free(src);
    free(dst);
    free(v);
}

static void test_bcast(goring_team_h team, size_t count, int root)
{
    uint8_t *buf = malloc(count);
    for (size_t k = 0; k < count; k++) buf[k] = rank == root ? (uint8_t)(k * 7 + 1) : 0;
    goring_coll_args_t a = {.coll = GORING_COLL_BCAST, .src = buf, .dst = buf, .count = count,
                            .dtype = GORING_DT_UINT8, .root = (uint32_t)root, .mem = GORING_MEM_HOST};
    run(team, &a, "bcast");
    for (size_t k = 0; k < count; k++)
        if (buf[k] != (uint8_t)(k * 7 + 1)) {
            CHECK(0, "bcast count %zu root %d: byte %zu wrong", count, root, k);
            break;
        }
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long calls = argc > 1 ? atol(argv[1]) : 1000;
    /* argv[2]: more context options (goring.h), e.g. alg_allreduce=ring;
     * argv[3] "mixed": odd ranks also turn the C path off. */
    char opts[256];
    int  mixed = argc > 3 && strcmp(argv[3], "mixed") == 0;
    snprintf(opts, sizeof(opts), "tls=self,sm;%s%s", argc > 2 ? argv[2] : "",
             mixed && rank % 2 ? ";cpath_max=0" : "");
    int cpath_on = strstr(opts, "cpath_max=0") == NULL;

    CHECK(goring_api_version() == GORING_API_VERSION, "API version %d, header %d", goring_api_version(), GORING_API_VERSION);
    goring_context_h ctx;
    goring_status_t st = goring_context_create(opts, &ctx);
    if (st != GORING_OK) die_status("context_create", st);
    goring_team_h team = connect(ctx);

    /* Twice: the first pass runs every shape in Go, which lowers the small
     * host ones into C; the second runs those in C (unless the options
     * turn the C path off, cpath_max=0, on some ranks or all: a call may
     * run in C on one rank and in Go on another). */
    size_t counts[] = {1, 3, 1000, 65537, 1 << 20};
    for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        size_t c = counts[i];
        test_allgather(team, c, 0);
        test_allgather(team, c, 1);
        test_allreduce(team, c, NULL);
        test_allreduce(team, c, "ring");
        test_allreduce_reposted(team, c);
        test_allreduce_misaligned(team, c);
        test_reduce_scatter(team, c, 0);
        test_reduce_scatter(team, c, 1);
        test_bcast(team, c, size - 1);
        if (c < (1 << 20)) {
            test_alltoallv(team, c, NULL, 0, 1); /* alltoall */
            test_alltoallv(team, c, NULL, 0, 0);
            test_alltoallv(team, c, "pairwise", 1, 0);
            test_alltoallv(team, c, "nimble", 0, 0);
            test_alltoallv(team, c, "nimble", 1, 0);
        }
    }
    test_alltoallv(team, 0, NULL, 0, 1); /* alltoall of nothing */
    test_alg_read_at_init(team);
    long validated_in_c = cpath_calls;
    CHECK(cpath_on ? validated_in_c >= 7 * 3 : validated_in_c == 0,
          "%ld validation calls ran in C with options %s", validated_in_c, opts);

    /* Many small calls back to back: the cgo boundary and the plan cache
     * under a steady load. */
    double t0 = MPI_Wtime();
    for (long i = 0; i < calls; i++) test_allreduce(team, 16, NULL);
    double per_us = (MPI_Wtime() - t0) / (calls > 0 ? calls : 1) * 1e6;

    /* Small calls after 5 ms of computation each, as an application
     * between collectives: the cost of waking the library, not of moving
     * bytes. Median of the calls' times (rank 0's). */
    enum { PAUSED = 200 };
    static double took[PAUSED], phases[PHASES][PAUSED];
    for (int i = 0; i < PAUSED; i++) {
        for (double until = MPI_Wtime() + 5e-3; MPI_Wtime() < until;)
            ;
        double s = MPI_Wtime();
        test_allreduce(team, 16, NULL);
        took[i] = (MPI_Wtime() - s) * 1e6;
        for (int k = 0; k < PHASES; k++) phases[k][i] = phase_us[k];
    }
    qsort(took, PAUSED, sizeof(took[0]), cmp_double);
    double paused_us = took[PAUSED / 2];
    for (int k = 0; k < PHASES; k++) qsort(phases[k], PAUSED, sizeof(double), cmp_double);

    /* Refusals: device memory and an unknown algorithm. */
    uint8_t one = 0;
    goring_coll_args_t dev = {.coll = GORING_COLL_ALLGATHER, .src = &one, .dst = &one, .count = 1,
                              .dtype = GORING_DT_UINT8, .mem = GORING_MEM_CUDA};
    goring_coll_h h;
    /* Host memory passed as device memory: without a CUDA driver goring
     * cannot run CUDA calls (another layer's); with one, the driver knows
     * the buffer as host memory and the call is the caller's error. */
    goring_status_t dst_st = goring_coll_init(team, &dev, &h);
    CHECK(dst_st == GORING_ERR_NOT_SUPPORTED || dst_st == GORING_ERR_INVALID,
          "host memory passed as device memory not refused: status %d", dst_st);
    if (dst_st == GORING_ERR_INVALID) {
        char why[256];
        goring_last_error(why, sizeof(why));
        CHECK(strstr(why, "host memory") != NULL, "refusal does not say why: %s", why);
    }
    goring_coll_args_t bad = {.coll = GORING_COLL_ALLGATHER, .src = &one, .dst = &one, .count = 1,
                              .dtype = GORING_DT_UINT8, .mem = GORING_MEM_HOST, .alg = "no_such_alg"};
    CHECK(goring_coll_init(team, &bad, &h) == GORING_ERR_INVALID, "unknown algorithm not refused");
    char msg[256];
    goring_last_error(msg, sizeof(msg));
    CHECK(strstr(msg, "no_such_alg") != NULL, "last error does not name the algorithm: %s", msg);
    /* Any capacity is a size_t: SIZE_MAX ("large enough") writes the text
     * and its NUL, nothing beyond. */
    size_t need = goring_last_error(NULL, 0);
    char *big = malloc(need + 8);
    memset(big, 'x', need + 8);
    CHECK(goring_last_error(big, SIZE_MAX) == need, "last error's length changed");
    CHECK(big[need] == 0 && big[need + 1] == 'x', "SIZE_MAX capacity: NUL not at %zu, or bytes past it written", need);
    free(big);
    CHECK(goring_coll_test(12345678) == GORING_ERR_INVALID, "stale handle not refused");
    /* In-place alltoallv is UCC's next layer's (size <= 64 here). */
    uint64_t ones[64] = {0};
    for (int j = 0; j < size && j < 64; j++) ones[j] = 1;
    goring_coll_args_t a2a_ip = {.coll = GORING_COLL_ALLTOALLV, .dst = &one, .dtype = GORING_DT_UINT8, .in_place = 1,
                                 .mem = GORING_MEM_HOST, .src_counts = ones, .dst_counts = ones};
    CHECK(goring_coll_init(team, &a2a_ip, &h) == GORING_ERR_NOT_SUPPORTED, "in-place alltoallv not refused");

    if ((st = goring_team_destroy(team)) != GORING_OK) die_status("team_destroy", st);
    if ((st = goring_context_destroy(ctx)) != GORING_OK) die_status("context_destroy", st);

    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("capi_test: after 5 ms of computation, medians: init %.1f us, post %.1f, test loop %.1f "
               "(%.0f polls), finalize %.1f\n", phases[PH_INIT][PAUSED / 2], phases[PH_POST][PAUSED / 2],
               phases[PH_TEST][PAUSED / 2], phases[PH_POLLS][PAUSED / 2], phases[PH_FINALIZE][PAUSED / 2]);
        printf("capi_test: %d ranks, %s (%ld validation calls of rank 0 in C); %ld small allreduces at %.1f us each; after 5 ms of "
               "computation %.1f us (median of %d; options %s%s)\n", size,
               all ? "FAILED" : "all collectives correct", validated_in_c, calls, per_us, paused_us, PAUSED, opts,
               mixed ? ", odd ranks cpath_max=0" : "");
    }
    MPI_Finalize();
    return all ? 1 : 0;
}
