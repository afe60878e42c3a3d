/*
 * teams: two live UCC teams of the same members, with tl/goring the only
 * team layer of the context that runs them (UCC_TLS=goring,self; tests/ucc/run.sh
 * runs it). Without tl/ucp UCC numbers no team (it allocates team ids only
 * for a layer that asks), so both teams have id 0, which was tl/goring's
 * key for a team: the two teams' small allreduces met on the context's
 * shared worker under one tag, and each rank's result summed the other
 * team's data. Odd ranks post on the first team first, even ranks on the
 * second first (MPI orders calls per communicator only).
 *
 * Prints "teams: ok" on rank 0 where every result was right.
 */
#include <stdint.h>

#include "ucc_mpi.h"

static int           rank, size;
static ucc_context_h ctx;

static void die(const char *what, ucc_status_t st) { ucc_mpi_die("teams", what, st); }

/* allreduce inits a sum of n int32 from src into dst on t. */
static ucc_coll_req_h allreduce(ucc_team_h t, int32_t *src, int32_t *dst, size_t n)
{
    ucc_coll_args_t a;
    ucc_coll_req_h  req;
    ucc_status_t    st;

    ucc_mpi_int32_args(&a, UCC_COLL_TYPE_ALLREDUCE, src, n, dst, n);
    if ((st = ucc_collective_init(&a, &req, t)) != UCC_OK) die("ucc_collective_init", st);
    return req;
}

int main(int argc, char **argv)
{
    int bad = 0, all_bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    ucc_lib_h lib;
    ctx = ucc_mpi_context("teams", MPI_COMM_WORLD, &lib);

    ucc_team_h a = ucc_mpi_team("teams", ctx, MPI_COMM_WORLD), b = ucc_mpi_team("teams", ctx, MPI_COMM_WORLD);
    enum { N = 4 };
    for (int it = 0; it < 3; it++) {
        int32_t sa[N], da[N], sb[N], db[N];
        for (int i = 0; i < N; i++) {
            sa[i] = 1 + i;
            sb[i] = 1000 + i;
            da[i] = db[i] = -1;
        }
        ucc_coll_req_h ra = allreduce(a, sa, da, N), rb = allreduce(b, sb, db, N);
        if (rank % 2) {
            ucc_collective_post(ra);
            ucc_collective_post(rb);
        } else {
            ucc_collective_post(rb);
            ucc_collective_post(ra);
        }
        ucc_status_t x, y;
        do {
            ucc_context_progress(ctx);
            x = ucc_collective_test(ra);
            y = ucc_collective_test(rb);
        } while (x == UCC_INPROGRESS || y == UCC_INPROGRESS);
        if (x != UCC_OK || y != UCC_OK) die("ucc_collective_test", x != UCC_OK ? x : y);
        for (int i = 0; i < N; i++) {
            if (da[i] != size * (1 + i) || db[i] != size * (1000 + i)) {
                fprintf(stderr, "teams: rank %d, round %d: element %d: first team %d, want %d; second %d, want %d\n",
                        rank, it, i, da[i], size * (1 + i), db[i], size * (1000 + i));
                bad++;
                break;
            }
        }
        ucc_collective_finalize(ra);
        ucc_collective_finalize(rb);
    }

    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("teams: %s\n", all_bad == 0 ? "ok" : "FAILED");
    ucc_team_destroy(a);
    ucc_team_destroy(b);
    ucc_context_destroy(ctx);
    ucc_finalize(lib);
    MPI_Finalize();
    return all_bad == 0 ? 0 : 1;
}
