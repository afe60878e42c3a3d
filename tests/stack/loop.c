/*
 * loop: back-to-back small collectives through MPI, timed on rank 0; for
 * profiles and quick comparisons of layers (docs/ucc.md "Small
 * collectives in C"):
 *
 *   mpicc -O2 tests/stack/loop.c -o loop
 *   mpirun -np 2 --tune ompi-config/goring-mca-params.conf \
 *       [-x UCC_TL_GORING_TUNE=allreduce,allgather:inf] ./loop CALLS COUNT [allgather]
 *
 * COUNT floats per rank (allreduce: the vector); 1000 untimed calls first.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 100000, count = argc > 2 ? atoi(argv[2]) : 16;
    int allgather = argc > 3 && strcmp(argv[3], "allgather") == 0, rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    float *a = calloc(count, sizeof(float)), *b = calloc((size_t)count * size, sizeof(float));
    double t = 0;
    for (int i = -1000; i < n; i++) {
        if (i == 0) t = MPI_Wtime();
        if (allgather) {
            MPI_Allgather(a, count, MPI_FLOAT, b, count, MPI_FLOAT, MPI_COMM_WORLD);
        } else {
            MPI_Allreduce(a, b, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
    }
    t = MPI_Wtime() - t;
    if (rank == 0) {
        printf("loop: %d %s calls of %d floats, %d ranks: %.3f us each\n", n,
               allgather ? "allgather" : "allreduce", count, size, t / n * 1e6);
    }
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
