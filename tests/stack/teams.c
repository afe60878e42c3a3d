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
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucc/api/ucc.h>

static ucc_status_t oob_allgather(void *sbuf, void *rbuf, size_t msglen, void *coll_info, void **req)
{
    MPI_Request *r = malloc(sizeof(*r));
    MPI_Iallgather(sbuf, (int)msglen, MPI_BYTE, rbuf, (int)msglen, MPI_BYTE, (MPI_Comm)coll_info, r);
    *req = r;
    return UCC_OK;
}

static ucc_status_t oob_test(void *req)
{
    int done = 0;
    MPI_Test((MPI_Request *)req, &done, MPI_STATUS_IGNORE);
    return done ? UCC_OK : UCC_INPROGRESS;
}

static ucc_status_t oob_free(void *req)
{
    free(req);
    return UCC_OK;
}

static int           rank, size;
static ucc_context_h ctx;

static void die(const char *what, ucc_status_t st)
{
    fprintf(stderr, "teams: rank %d: %s: status %d\n", rank, what, st);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* team is a UCC team of every rank, over an out-of-band allgather on comm. */
static ucc_team_h team(MPI_Comm comm)
{
    ucc_team_params_t tp;
    ucc_team_h        t;
    ucc_status_t      st;

    memset(&tp, 0, sizeof(tp));
    tp.mask          = UCC_TEAM_PARAM_FIELD_EP | UCC_TEAM_PARAM_FIELD_EP_RANGE | UCC_TEAM_PARAM_FIELD_OOB;
    tp.oob.allgather = oob_allgather;
    tp.oob.req_test  = oob_test;
    tp.oob.req_free  = oob_free;
    tp.oob.coll_info = (void *)comm;
    tp.oob.n_oob_eps = size;
    tp.oob.oob_ep    = rank;
    tp.ep            = rank;
    tp.ep_range      = UCC_COLLECTIVE_EP_RANGE_CONTIG;
    if ((st = ucc_team_create_post(&ctx, 1, &tp, &t)) != UCC_OK) die("ucc_team_create_post", st);
    while ((st = ucc_team_create_test(t)) == UCC_INPROGRESS) ucc_context_progress(ctx);
    if (st != UCC_OK) die("ucc_team_create_test", st);
    return t;
}

/* allreduce inits a sum of n int32 from src into dst on t. */
static ucc_coll_req_h allreduce(ucc_team_h t, int32_t *src, int32_t *dst, size_t n)
{
    ucc_coll_args_t a;
    ucc_coll_req_h  req;
    ucc_status_t    st;

    memset(&a, 0, sizeof(a));
    a.coll_type         = UCC_COLL_TYPE_ALLREDUCE;
    a.op                = UCC_OP_SUM;
    a.src.info.buffer   = src;
    a.src.info.count    = n;
    a.src.info.datatype = UCC_DT_INT32;
    a.src.info.mem_type = UCC_MEMORY_TYPE_HOST;
    a.dst.info.buffer   = dst;
    a.dst.info.count    = n;
    a.dst.info.datatype = UCC_DT_INT32;
    a.dst.info.mem_type = UCC_MEMORY_TYPE_HOST;
    if ((st = ucc_collective_init(&a, &req, t)) != UCC_OK) die("ucc_collective_init", st);
    return req;
}

int main(int argc, char **argv)
{
    int bad = 0, all_bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    ucc_lib_config_h     lcfg;
    ucc_lib_params_t     lp = {.mask = UCC_LIB_PARAM_FIELD_THREAD_MODE, .thread_mode = UCC_THREAD_SINGLE};
    ucc_lib_h            lib;
    ucc_context_config_h ccfg;
    ucc_context_params_t cp;
    ucc_status_t         st;

    if (ucc_lib_config_read(NULL, NULL, &lcfg) != UCC_OK || ucc_init(&lp, lcfg, &lib) != UCC_OK) die("ucc_init", -1);
    ucc_lib_config_release(lcfg);
    memset(&cp, 0, sizeof(cp));
    cp.mask          = UCC_CONTEXT_PARAM_FIELD_OOB;
    cp.oob.allgather = oob_allgather;
    cp.oob.req_test  = oob_test;
    cp.oob.req_free  = oob_free;
    cp.oob.coll_info = (void *)MPI_COMM_WORLD;
    cp.oob.n_oob_eps = size;
    cp.oob.oob_ep    = rank;
    if ((st = ucc_context_config_read(lib, NULL, &ccfg)) != UCC_OK) die("ucc_context_config_read", st);
    if ((st = ucc_context_create(lib, &cp, ccfg, &ctx)) != UCC_OK) die("ucc_context_create", st);
    ucc_context_config_release(ccfg);

    ucc_team_h a = team(MPI_COMM_WORLD), b = team(MPI_COMM_WORLD);
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
