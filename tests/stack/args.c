/*
 * args: UCC calls whose counts disagree, made on UCC directly (Open MPI's
 * coll/ucc never makes them), with tl/goring's score raised to inf: every
 * rank must be refused at ucc_collective_init, alike, and a good call of
 * the same shape must still run (tests/ucc/run.sh runs it).
 *
 *   in-place allgather whose dst count is not team size blocks (tl/goring
 *   used to drop dst's tail, unwritten, and complete);
 *   allgather whose dst count is below size * src count (tl/goring used to
 *   write size * src count elements into it);
 *   allreduce whose src count is below its dst count, and reduce_scatter
 *   whose src count is below size * dst count (tl/goring would read past
 *   src's end);
 *   bcast whose root is no rank of the team: UCC's root is 64 bits, and
 *   tl/goring used to keep its low 32, running a root of 2^32 + 1 as
 *   rank 1's bcast.
 *
 * Prints "args: ok" on rank 0 where every case ended as it should.
 */
#include <stdint.h>

#include "ucc_mpi.h"

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "args: rank %d: ", rank); \
    fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); bad++; } } while (0)

/* run inits the collective of a and, where init succeeds, runs it to its
 * end; it returns init's status. */
static ucc_status_t run(ucc_context_h ctx, ucc_team_h team, ucc_coll_args_t *a)
{
    ucc_coll_req_h req;
    ucc_status_t   st = ucc_collective_init(a, &req, team);

    if (st != UCC_OK) {
        return st;
    }
    ucc_collective_post(req);
    while (ucc_collective_test(req) == UCC_INPROGRESS) {
        ucc_context_progress(ctx);
    }
    ucc_collective_finalize(req);
    return UCC_OK;
}

/* call inits a collective of int32 (src count sc, dst count dc; the
 * reductions sum) and, where init succeeds, runs it; it returns init's
 * status. */
static ucc_status_t call(ucc_context_h ctx, ucc_team_h team, ucc_coll_type_t coll, int in_place,
                         int32_t *src, size_t sc, int32_t *dst, size_t dc)
{
    ucc_coll_args_t a;

    ucc_mpi_int32_args(&a, coll, src, sc, dst, dc);
    if (in_place) {
        a.mask  = UCC_COLL_ARGS_FIELD_FLAGS;
        a.flags = UCC_COLL_ARGS_FLAG_IN_PLACE;
    }
    return run(ctx, team, &a);
}

/* call_bcast inits a bcast of count int32 at buf from root and, where
 * init succeeds, runs it; it returns init's status. */
static ucc_status_t call_bcast(ucc_context_h ctx, ucc_team_h team, int32_t *buf, size_t count, uint64_t root)
{
    ucc_coll_args_t a;

    ucc_mpi_int32_args(&a, UCC_COLL_TYPE_BCAST, buf, count, NULL, 0);
    a.root = root;
    return run(ctx, team, &a);
}

int main(int argc, char **argv)
{
    int rank, size, bad = 0, all_bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    ucc_lib_h     lib;
    ucc_context_h ctx  = ucc_mpi_context("args", MPI_COMM_WORLD, &lib);
    ucc_team_h    team = ucc_mpi_team("args", ctx, MPI_COMM_WORLD);
    ucc_status_t  st;

    const size_t k = 3;
    int32_t     *src = malloc(k * sizeof(int32_t)), *dst = malloc((k * size + 1) * sizeof(int32_t));

    /* A good in-place allgather first, then the bad calls. */
    for (size_t i = 0; i < k * size + 1; i++) dst[i] = -1;
    for (size_t i = 0; i < k; i++) dst[rank * k + i] = rank * 100 + (int)i;
    st = call(ctx, team, UCC_COLL_TYPE_ALLGATHER, 1, NULL, 0, dst, k * size);
    CHECK(st == UCC_OK, "in-place allgather of %zu per rank: init status %d", k, st);
    for (int q = 0; q < size; q++)
        for (size_t i = 0; i < k; i++)
            CHECK(dst[q * k + i] == q * 100 + (int)i, "in-place allgather: dst[%zu] = %d", q * k + i, dst[q * k + i]);

    st = call(ctx, team, UCC_COLL_TYPE_ALLGATHER, 1, NULL, 0, dst, k * size + 1);
    CHECK(st == UCC_ERR_INVALID_PARAM, "in-place allgather, dst count %zu on %d ranks: init status %d, want %d",
          k * size + 1, size, st, UCC_ERR_INVALID_PARAM);
    for (size_t i = 0; i < k; i++) src[i] = rank;
    st = call(ctx, team, UCC_COLL_TYPE_ALLGATHER, 0, src, k, dst, k * size - 1);
    CHECK(st == UCC_ERR_INVALID_PARAM, "allgather of %zu, dst count %zu on %d ranks: init status %d, want %d",
          k, k * size - 1, size, st, UCC_ERR_INVALID_PARAM);

    /* The reductions: a good one of each, then src counts too short. */
    int32_t *whole = malloc(k * size * sizeof(int32_t));
    for (size_t i = 0; i < k * size; i++) whole[i] = rank + (int)i;
    st = call(ctx, team, UCC_COLL_TYPE_ALLREDUCE, 0, whole, k, dst, k);
    CHECK(st == UCC_OK, "allreduce of %zu: init status %d", k, st);
    for (size_t i = 0; i < k; i++)
        CHECK(dst[i] == size * (size - 1) / 2 + size * (int)i, "allreduce: dst[%zu] = %d", i, dst[i]);
    st = call(ctx, team, UCC_COLL_TYPE_REDUCE_SCATTER, 0, whole, k * size, dst, k);
    CHECK(st == UCC_OK, "reduce_scatter of %zu per rank: init status %d", k, st);
    for (size_t i = 0; i < k; i++)
        CHECK(dst[i] == size * (size - 1) / 2 + size * (int)(rank * k + i), "reduce_scatter: dst[%zu] = %d", i, dst[i]);
    st = call(ctx, team, UCC_COLL_TYPE_ALLREDUCE, 0, whole, k - 1, dst, k);
    CHECK(st == UCC_ERR_INVALID_PARAM, "allreduce, src count %zu, dst count %zu: init status %d, want %d", k - 1, k,
          st, UCC_ERR_INVALID_PARAM);
    st = call(ctx, team, UCC_COLL_TYPE_REDUCE_SCATTER, 0, whole, k * size - 1, dst, k);
    CHECK(st == UCC_ERR_INVALID_PARAM, "reduce_scatter, src count %zu, dst count %zu on %d ranks: init status %d, want %d",
          k * size - 1, k, size, st, UCC_ERR_INVALID_PARAM);
    free(whole);

    /* bcast: a good one from the last rank, then roots outside the team. */
    for (size_t i = 0; i < k; i++) src[i] = rank * 100 + (int)i;
    st = call_bcast(ctx, team, src, k, (uint64_t)size - 1);
    CHECK(st == UCC_OK, "bcast of %zu from rank %d: init status %d", k, size - 1, st);
    for (size_t i = 0; i < k; i++)
        CHECK(src[i] == (size - 1) * 100 + (int)i, "bcast: src[%zu] = %d", i, src[i]);
    for (size_t i = 0; i < k; i++) src[i] = rank * 100 + (int)i;
    const uint64_t roots[] = {(uint64_t)size, (UINT64_C(1) << 32) + 1};
    for (size_t r = 0; r < sizeof(roots) / sizeof(roots[0]); r++) {
        st = call_bcast(ctx, team, src, k, roots[r]);
        CHECK(st == UCC_ERR_INVALID_PARAM, "bcast root %llu on %d ranks: init status %d, want %d",
              (unsigned long long)roots[r], size, st, UCC_ERR_INVALID_PARAM);
        CHECK(src[0] == rank * 100, "bcast root %llu on %d ranks: src[0] = %d, want %d", (unsigned long long)roots[r],
              size, src[0], rank * 100);
    }

    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("args: %s\n", all_bad == 0 ? "ok" : "FAILED");
    free(src);
    free(dst);
    ucc_team_destroy(team);
    ucc_context_destroy(ctx);
    ucc_finalize(lib);
    MPI_Finalize();
    return all_bad == 0 ? 0 : 1;
}
