/*
 * ucc_mpi.h: UCC over MPI for the stack's C test programs (args.c,
 * teams.c): the out-of-band allgather that UCC makes its contexts and
 * teams with, run on an MPI communicator, and a context and a team of
 * every rank of a communicator. A failure ends the job (MPI_Abort),
 * naming the program and the call.
 */
#ifndef GORING_TESTS_UCC_MPI_H
#define GORING_TESTS_UCC_MPI_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucc/api/ucc.h>

static inline ucc_status_t ucc_mpi_oob_allgather(void *sbuf, void *rbuf, size_t msglen, void *coll_info,
                                                 void **req)
{
    MPI_Request *r = malloc(sizeof(*r));
    MPI_Iallgather(sbuf, (int)msglen, MPI_BYTE, rbuf, (int)msglen, MPI_BYTE, (MPI_Comm)coll_info, r);
    *req = r;
    return UCC_OK;
}

static inline ucc_status_t ucc_mpi_oob_test(void *req)
{
    int done = 0;
    MPI_Test((MPI_Request *)req, &done, MPI_STATUS_IGNORE);
    return done ? UCC_OK : UCC_INPROGRESS;
}

static inline ucc_status_t ucc_mpi_oob_free(void *req)
{
    free(req);
    return UCC_OK;
}

static inline void ucc_mpi_die(const char *prog, const char *what, ucc_status_t st)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "%s: rank %d: %s: status %d\n", prog, rank, what, (int)st);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* ucc_mpi_oob is the out-of-band allgather over comm that contexts and
 * teams exchange their addresses with (the same type for both). */
static inline ucc_oob_coll_t ucc_mpi_oob(MPI_Comm comm)
{
    ucc_oob_coll_t oob;
    int            rank, size;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    memset(&oob, 0, sizeof(oob));
    oob.allgather = ucc_mpi_oob_allgather;
    oob.req_test  = ucc_mpi_oob_test;
    oob.req_free  = ucc_mpi_oob_free;
    oob.coll_info = (void *)comm;
    oob.n_oob_eps = size;
    oob.oob_ep    = rank;
    return oob;
}

/* ucc_mpi_context initializes UCC (single-threaded) into *lib and makes a
 * context of comm's ranks. */
static inline ucc_context_h ucc_mpi_context(const char *prog, MPI_Comm comm, ucc_lib_h *lib)
{
    ucc_lib_config_h     lcfg;
    ucc_lib_params_t     lp = {.mask = UCC_LIB_PARAM_FIELD_THREAD_MODE, .thread_mode = UCC_THREAD_SINGLE};
    ucc_context_config_h ccfg;
    ucc_context_params_t cp;
    ucc_context_h        ctx;
    ucc_status_t         st;

    if ((st = ucc_lib_config_read(NULL, NULL, &lcfg)) != UCC_OK) ucc_mpi_die(prog, "ucc_lib_config_read", st);
    if ((st = ucc_init(&lp, lcfg, lib)) != UCC_OK) ucc_mpi_die(prog, "ucc_init", st);
    ucc_lib_config_release(lcfg);
    memset(&cp, 0, sizeof(cp));
    cp.mask          = UCC_CONTEXT_PARAM_FIELD_OOB;
    cp.oob           = ucc_mpi_oob(comm);
    if ((st = ucc_context_config_read(*lib, NULL, &ccfg)) != UCC_OK) ucc_mpi_die(prog, "ucc_context_config_read", st);
    if ((st = ucc_context_create(*lib, &cp, ccfg, &ctx)) != UCC_OK) ucc_mpi_die(prog, "ucc_context_create", st);
    ucc_context_config_release(ccfg);
    return ctx;
}

/* ucc_mpi_team makes a team of every rank of comm on ctx and waits for it. */
static inline ucc_team_h ucc_mpi_team(const char *prog, ucc_context_h ctx, MPI_Comm comm)
{
    ucc_team_params_t tp;
    ucc_team_h        t;
    ucc_status_t      st;
    int               rank;

    MPI_Comm_rank(comm, &rank);
    memset(&tp, 0, sizeof(tp));
    tp.mask          = UCC_TEAM_PARAM_FIELD_EP | UCC_TEAM_PARAM_FIELD_EP_RANGE | UCC_TEAM_PARAM_FIELD_OOB;
    tp.oob           = ucc_mpi_oob(comm);
    tp.ep            = rank;
    tp.ep_range      = UCC_COLLECTIVE_EP_RANGE_CONTIG;
    if ((st = ucc_team_create_post(&ctx, 1, &tp, &t)) != UCC_OK) ucc_mpi_die(prog, "ucc_team_create_post", st);
    while ((st = ucc_team_create_test(t)) == UCC_INPROGRESS) ucc_context_progress(ctx);
    if (st != UCC_OK) ucc_mpi_die(prog, "ucc_team_create_test", st);
    return t;
}

/* ucc_mpi_int32_args sets *a to a collective of int32 in host memory:
 * src count sc at src, dst count dc at dst (no dst where dst is NULL, as
 * for a bcast), summing where it reduces. */
static inline void ucc_mpi_int32_args(ucc_coll_args_t *a, ucc_coll_type_t coll, int32_t *src, size_t sc,
                                      int32_t *dst, size_t dc)
{
    memset(a, 0, sizeof(*a));
    a->coll_type         = coll;
    a->op                = UCC_OP_SUM;
    a->src.info.buffer   = src;
    a->src.info.count    = sc;
    a->src.info.datatype = UCC_DT_INT32;
    a->src.info.mem_type = UCC_MEMORY_TYPE_HOST;
    if (dst != NULL) {
        a->dst.info.buffer   = dst;
        a->dst.info.count    = dc;
        a->dst.info.datatype = UCC_DT_INT32;
        a->dst.info.mem_type = UCC_MEMORY_TYPE_HOST;
    }
}

#endif
