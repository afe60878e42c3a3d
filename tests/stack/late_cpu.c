/*
 * late_cpu: what a rank costs while it waits in a collective for a late
 * peer (tests/stack/late_cpu.sh runs it on each layer).
 *
 *   late_cpu LATE_S COUNT
 *
 * Every rank first runs one MPI_Allreduce of COUNT floats on time (so
 * that setting up the layer is not part of the wait), then all pass a
 * barrier. Rank 0 sleeps LATE_S seconds (a fraction is allowed) and enters
 * a second MPI_Allreduce of COUNT floats (sum); the others enter it at
 * once. Each rank measures around that call:
 *
 *   - its CPU time, user and system (getrusage(RUSAGE_SELF) before and
 *     after; the process's, so any helper thread of the layers counts);
 *   - its time in the call;
 *   - for a waiting rank, its wake-up: the time from rank 0's entry into
 *     the call to this rank's return. Rank 0 reads its clock just before
 *     it calls and broadcasts the reading afterwards. The clock is
 *     CLOCK_MONOTONIC, one clock for every process of a host; MPI_Wtime
 *     is not used because Open MPI's counts from each process's own
 *     origin (its first call), so two ranks' readings do not compare.
 *
 * Rank 0 prints one line per rank:
 *
 *   late_cpu rank R: call S s cpu C s user U s sys Y s wake W us
 *
 * (rank 0's wake is -), then "late_cpu: ok" when every rank's result is
 * right (each rank contributes rank+1 to every element; the sum is
 * n(n+1)/2), else "late_cpu: WRONG" and exit status 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double tv_s(struct timeval t) { return t.tv_sec + t.tv_usec * 1e-6; }

static void sleep_s(double s)
{
    struct timespec t = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&t, &t) != 0) {
    }
}

/* allreduce: one call over s -> r; returns the number of wrong elements. */
static long allreduce(const float *s, float *r, int count, int n)
{
    long bad = 0;
    for (int i = 0; i < count; i++) r[i] = -1;
    MPI_Allreduce(s, r, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < count; i++)
        if (r[i] != (float)n * (n + 1) / 2) bad++;
    return bad;
}

enum { F_CALL, F_USER, F_SYS, F_WAKE, F_BAD, NF };

int main(int argc, char **argv)
{
    int rank, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc != 3 || atof(argv[1]) < 0 || atoi(argv[2]) < 1) {
        if (rank == 0) fprintf(stderr, "usage: late_cpu LATE_S COUNT\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double late = atof(argv[1]);
    int count = atoi(argv[2]);
    float *s = malloc(sizeof(float) * count), *r = malloc(sizeof(float) * count);
    if (!s || !r) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < count; i++) s[i] = rank + 1;

    long bad = allreduce(s, r, count, n);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) sleep_s(late);

    struct rusage u0, u1;
    getrusage(RUSAGE_SELF, &u0);
    double entered = now();
    bad += allreduce(s, r, count, n);
    double returned = now();
    getrusage(RUSAGE_SELF, &u1);

    double t0 = entered;
    MPI_Bcast(&t0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double mine[NF] = {
        [F_CALL] = returned - entered,
        [F_USER] = tv_s(u1.ru_utime) - tv_s(u0.ru_utime),
        [F_SYS] = tv_s(u1.ru_stime) - tv_s(u0.ru_stime),
        [F_WAKE] = returned - t0,
        [F_BAD] = (double)bad,
    };
    double *all = rank == 0 ? malloc(sizeof(double) * NF * n) : NULL;
    MPI_Gather(mine, NF, MPI_DOUBLE, all, NF, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int rc = 0;
    if (rank == 0) {
        long wrong = 0;
        for (int q = 0; q < n; q++) {
            double *v = all + q * NF;
            char wake[32] = "-";
            if (q != 0) snprintf(wake, sizeof wake, "%.0f", v[F_WAKE] * 1e6);
            printf("late_cpu rank %d: call %.3f s cpu %.3f s user %.3f s sys %.3f s wake %s us\n", q, v[F_CALL],
                   v[F_USER] + v[F_SYS], v[F_USER], v[F_SYS], wake);
            wrong += (long)v[F_BAD];
        }
        printf("late_cpu: %s (%d ranks, %d floats, rank 0 %.3f s late)\n", wrong ? "WRONG" : "ok", n, count, late);
        rc = wrong != 0;
        free(all);
    }
    free(s);
    free(r);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
