/*
 * robust: what an MPI program may do to a collective library that goring's
 * team layer must survive, run through Open MPI's coll/ucc
 * (tests/stack/robust.sh drives it).
 *
 *   robust late SECONDS     rank size-1 enters each collective SECONDS late
 *   robust split ROUNDS     MPI_Comm_split + allreduce + MPI_Comm_free, ROUNDS times
 *   robust kill             rank size-1 dies (SIGKILL) while the others wait
 *   robust pause CALLS [US] small allreduces, each after US µs of computation (5000)
 *
 * late: an MPI_Allreduce (float, sum) and an MPI_Allgather (int) of 1 MiB
 * per rank, then an allreduce of 16 floats (goring's C path: the same call
 * once on time first, so the late one runs in C), the last rank sleeping
 * SECONDS before each; every rank checks the contents and prints how long
 * it waited. MPI allows any delay, so the
 * calls must succeed and take SECONDS (not SECONDS plus a timeout and a
 * fallback).
 *
 * split: the memory a rank holds after ROUNDS communicators have come and
 * gone (VmRSS of /proc/self/status after the first round and after the
 * last, rank 0), to compare goring with UCC's own layers.
 *
 * pause: CALLS allreduces of 16 floats, each after every rank computed
 * for US microseconds, 5 ms unless given (a busy loop, as an application
 * between collectives); prints
 * the median time of one call on rank 0, and the same back to back. The
 * cost measured is waking the library, not moving bytes.
 *
 * kill: the last rank kills itself after the others have entered an
 * MPI_Allreduce; they must end (with an error, or killed by the launcher)
 * rather than hang. robust.sh bounds the run with a timeout.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB (1 << 20)

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
    fclose(f);
    return kib;
}

/* late_allreduce: every rank contributes rank+1 in each element; the sum
 * is n(n+1)/2 everywhere. Returns the number of wrong elements. */
static long late_allreduce(int rank, int n, int late, double *waited)
{
    int count = MIB / sizeof(float);
    float *s = malloc(MIB), *r = malloc(MIB);
    long bad = 0;
    for (int i = 0; i < count; i++) { s[i] = rank + 1; r[i] = -1; }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == n - 1) sleep(late);
    double t = MPI_Wtime();
    MPI_Allreduce(s, r, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    *waited = MPI_Wtime() - t;
    for (int i = 0; i < count; i++)
        if (r[i] != (float)n * (n + 1) / 2) bad++;
    free(s); free(r);
    return bad;
}

/* late_allgather: rank q's block holds q*count+i at index i. */
static long late_allgather(int rank, int n, int late, double *waited)
{
    int count = MIB / sizeof(int);
    int *s = malloc(MIB), *r = malloc((size_t)MIB * n);
    long bad = 0;
    for (int i = 0; i < count; i++) s[i] = rank * count + i;
    memset(r, 0xff, (size_t)MIB * n);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == n - 1) sleep(late);
    double t = MPI_Wtime();
    MPI_Allgather(s, count, MPI_INT, r, count, MPI_INT, MPI_COMM_WORLD);
    *waited = MPI_Wtime() - t;
    for (long i = 0; i < (long)count * n; i++)
        if (r[i] != (int)i) bad++;
    free(s); free(r);
    return bad;
}

/* late_small: a 16-float allreduce on time, then the same late. */
static long late_small(int rank, int n, int late, double *waited)
{
    float s[16], r[16];
    long  bad = 0;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 16; i++) { s[i] = rank + i; r[i] = -1; }
        MPI_Barrier(MPI_COMM_WORLD);
        if (round == 1 && rank == n - 1) sleep(late);
        double t = MPI_Wtime();
        MPI_Allreduce(s, r, 16, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        *waited = MPI_Wtime() - t;
        for (int i = 0; i < 16; i++)
            if (r[i] != (float)n * (n - 1) / 2 + (float)n * i) bad++;
    }
    return bad;
}

static int run_late(int rank, int n, int late)
{
    double w1, w2, w3, max1, max2, max3;
    long bad = late_allreduce(rank, n, late, &w1) + late_allgather(rank, n, late, &w2) +
               late_small(rank, n, late, &w3), total;
    MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce(&w1, &max1, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&w2, &max2, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&w3, &max3, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("robust late %d s: allreduce waited %.2f s, allgather %.2f s, small allreduce %.2f s, "
               "%ld wrong elements: %s\n", late, max1, max2, max3, total, total ? "FAILED" : "ok");
    return total != 0;
}

static int run_split(int rank, int rounds)
{
    long start = -1;
    int count = 1024, bad = 0;
    float *s = malloc(count * sizeof(float)), *r = malloc(count * sizeof(float));
    for (int i = 0; i < count; i++) s[i] = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int k = 0; k < rounds; k++) {
        MPI_Comm c;
        int sz;
        MPI_Comm_split(MPI_COMM_WORLD, (rank + k) % 2, rank, &c);
        MPI_Comm_size(c, &sz);
        MPI_Allreduce(s, r, count, MPI_FLOAT, MPI_SUM, c);
        if (r[0] != sz || r[count - 1] != sz) bad++;
        MPI_Comm_free(&c);
        if (k == 0) start = rss_kib();
    }
    long end = rss_kib();
    double secs = MPI_Wtime() - t0;
    int total;
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("robust split %d rounds in %.3f s: rank 0 VmRSS %ld KiB after round 1, %ld KiB after round %d (+%ld KiB), %d wrong: %s\n",
               rounds, secs, start, end, rounds, end - start, total, total ? "FAILED" : "ok");
    free(s); free(r);
    return total != 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int run_pause(int rank, int calls, int us)
{
    float s[16], r[16];
    double *took = malloc(calls * sizeof(double)), *b2b = malloc(calls * sizeof(double));
    int bad = 0, total;
    for (int i = 0; i < 16; i++) s[i] = rank + 1;
    MPI_Allreduce(s, r, 16, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); /* plan and connections */
    for (int k = 0; k < calls; k++) {
        for (double until = MPI_Wtime() + us * 1e-6; MPI_Wtime() < until;)
            ;
        double t = MPI_Wtime();
        MPI_Allreduce(s, r, 16, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        took[k] = (MPI_Wtime() - t) * 1e6;
        if (r[0] != r[15]) bad++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < calls; k++) {
        double t = MPI_Wtime();
        MPI_Allreduce(s, r, 16, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        b2b[k] = (MPI_Wtime() - t) * 1e6;
    }
    qsort(took, calls, sizeof(double), cmp_double);
    qsort(b2b, calls, sizeof(double), cmp_double);
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("robust pause %d calls: 16-float allreduce after %g ms of computation %.1f us, back to back %.1f us (medians, rank 0), %d wrong: %s\n",
               calls, us / 1e3, took[calls / 2], b2b[calls / 2], total, total ? "FAILED" : "ok");
    free(took); free(b2b);
    return total != 0;
}

static void run_kill(int rank, int n)
{
    int count = MIB / sizeof(float);
    float *s = calloc(count, sizeof(float)), *r = calloc(count, sizeof(float));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == n - 1) {
        sleep(2); /* the others are inside the allreduce by now */
        raise(SIGKILL);
    }
    MPI_Allreduce(s, r, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    printf("robust kill: rank %d: allreduce returned although rank %d died\n", rank, n - 1);
}

int main(int argc, char **argv)
{
    int rank, n, rc = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc == 3 && !strcmp(argv[1], "late")) {
        rc = run_late(rank, n, atoi(argv[2]));
    } else if (argc == 3 && !strcmp(argv[1], "split")) {
        rc = run_split(rank, atoi(argv[2]));
    } else if ((argc == 3 || argc == 4) && !strcmp(argv[1], "pause")) {
        int us = argc == 4 ? atoi(argv[3]) : 5000;
        if (us < 0 || us > 10000000) {
            if (rank == 0) fprintf(stderr, "robust pause: %d µs of computation (0 to 10 s)\n", us);
            rc = 2;
        } else {
            rc = run_pause(rank, atoi(argv[2]), us);
        }
    } else if (argc == 2 && !strcmp(argv[1], "kill")) {
        run_kill(rank, n);
        rc = 1;
    } else {
        if (rank == 0) fprintf(stderr, "usage: robust late SECONDS | split ROUNDS | pause CALLS [US] | kill\n");
        rc = 2;
    }
    MPI_Finalize();
    return rc;
}
