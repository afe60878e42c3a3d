/*
 * osu_coll: times MPI_Allgather and MPI_Allreduce the way the OSU
 * Micro-Benchmarks do (osu_allgather, osu_allreduce), so that goring bench
 * can be compared with Open MPI in one run without building OMB.
 *
 *   osu_coll allgather|allreduce MIN_BYTES MAX_BYTES [ITERS [WARMUP]]
 *
 * Sizes double from MIN_BYTES to MAX_BYTES (allgather: bytes each rank
 * contributes; allreduce: the float32 vector, MPI_SUM). Iterations default
 * as in OMB: 1000 timed after 200 warm-up up to 8 KiB, 100 after 10 above.
 * Each iteration is timed on every rank around the collective alone and
 * followed by MPI_Barrier; avg/min/max are over the ranks' mean latency.
 * Output: an OSU-style table with a bus bandwidth column (nccl-tests
 * definition, as goring bench prints it).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 'K' || *end == 'k') v <<= 10;
    else if (*end == 'M' || *end == 'm') v <<= 20;
    else if (*end == 'G' || *end == 'g') v <<= 30;
    return v;
}

int main(int argc, char **argv)
{
    int rank, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 4 || (strcmp(argv[1], "allgather") && strcmp(argv[1], "allreduce"))) {
        if (rank == 0)
            fprintf(stderr, "usage: osu_coll allgather|allreduce MIN_BYTES MAX_BYTES [ITERS [WARMUP]]\n");
        MPI_Finalize();
        return 2;
    }
    int allgather = strcmp(argv[1], "allgather") == 0;
    long lo = parse_size(argv[2]), hi = parse_size(argv[3]);
    int iters_opt = argc > 4 ? atoi(argv[4]) : 0;
    int warm_opt = argc > 5 ? atoi(argv[5]) : -1;
    if (lo < 1 || hi < lo) {
        if (rank == 0) fprintf(stderr, "osu_coll: bad size range\n");
        MPI_Finalize();
        return 2;
    }
    size_t sbytes = hi, rbytes = allgather ? (size_t)hi * n : hi;
    char *sbuf = malloc(sbytes), *rbuf = malloc(rbytes);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "osu_coll: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Touch the pages so first-touch costs are not timed. */
    memset(sbuf, 1, sbytes);
    memset(rbuf, 0, rbytes);
    if (rank == 0) {
        printf("# osu_coll %s, %d ranks (Open MPI)\n", argv[1], n);
        printf("%-10s%18s%18s%18s%12s%16s\n", "# Size", "Avg Latency(us)", "Min Latency(us)",
               "Max Latency(us)", "Iterations", "Bus BW(GB/s)");
        fflush(stdout);
    }
    for (long size = lo; size <= hi; size = size * 2 > hi && size != hi ? hi : size * 2) {
        int iters = size > 8192 ? 100 : 1000, skip = size > 8192 ? 10 : 200;
        if (iters_opt > 0) iters = iters_opt;
        if (warm_opt >= 0) skip = warm_opt;
        double timer = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < iters + skip; i++) {
            double t0 = MPI_Wtime();
            if (allgather)
                MPI_Allgather(sbuf, (int)size, MPI_CHAR, rbuf, (int)size, MPI_CHAR, MPI_COMM_WORLD);
            else
                MPI_Allreduce(sbuf, rbuf, (int)(size / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            double t1 = MPI_Wtime();
            if (i >= skip) timer += t1 - t0;
            MPI_Barrier(MPI_COMM_WORLD);
        }
        double lat = timer * 1e6 / iters, mn, mx, sum;
        MPI_Reduce(&lat, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        MPI_Reduce(&lat, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&lat, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            double avg = sum / n;
            double moved = allgather ? (double)(n - 1) * size : 2.0 * (n - 1) / n * size;
            printf("%-10ld%18.2f%18.2f%18.2f%12d%16.2f\n", size, avg, mn, mx, iters, moved / (avg * 1e-6) / 1e9);
            fflush(stdout);
        }
        if (size == hi) break;
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
