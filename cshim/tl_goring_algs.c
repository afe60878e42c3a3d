/*
 * tl_goring_algs.c: goring's algorithms as UCC's algorithm ids, so that
 * ucc_info -A lists them and a TUNE string selects one per size range,
 * as UCC's own layers allow:
 *
 *     UCC_TL_GORING_TUNE=allreduce:0-4M:@recursive_doubling#allreduce:4M-inf:@lane
 *
 * The table is tl_goring_algs.h, generated from sched's registry. UCC keeps
 * only an init function per score range, so the algorithm must be baked
 * into the function the name maps to: one small init per (collective,
 * algorithm), each passing its name to goring_coll_init (args.alg) as a
 * call's own choice. Where that algorithm cannot serve the call (recursive
 * doubling on three ranks), goring answers UCC_ERR_NOT_SUPPORTED and UCC
 * takes the next layer, as for any call goring declines.
 */
#include "tl_goring.h"
#include "tl_goring_algs.h"

#include <string.h>

#define GORING_ALG_INIT(_coll, _id, _name, _desc)                                          \
    static ucc_status_t ucc_tl_goring_init_##_coll##_##_name(                               \
        ucc_base_coll_args_t *coll_args, ucc_base_team_t *team, ucc_coll_task_t **task)   \
    {                                                                                        \
        return ucc_tl_goring_coll_init_alg(coll_args, team, task, #_name);                 \
    }
#define GORING_ALG_INFO(_coll, _id, _name, _desc) {.id = _id, .name = #_name, .desc = _desc},
#define GORING_ALG_ENTRY(_coll, _id, _name, _desc) ucc_tl_goring_init_##_coll##_##_name,

/* For each collective: the inits, UCC's info array (ended by a NULL name,
 * as ucc_info walks it) and the inits in id order. */
#define GORING_ALG_TABLE(_coll, _LIST)                                                      \
    _LIST(GORING_ALG_INIT)                                                                   \
    static ucc_base_coll_alg_info_t ucc_tl_goring_##_coll##_algs[] = {                      \
        _LIST(GORING_ALG_INFO){.id = 0, .name = NULL, .desc = NULL}};                       \
    static const ucc_base_coll_init_fn_t ucc_tl_goring_##_coll##_inits[] = {_LIST(GORING_ALG_ENTRY)};

GORING_ALG_TABLE(allgather, GORING_ALGS_ALLGATHER)
GORING_ALG_TABLE(allreduce, GORING_ALGS_ALLREDUCE)
GORING_ALG_TABLE(reduce_scatter, GORING_ALGS_REDUCE_SCATTER)
GORING_ALG_TABLE(bcast, GORING_ALGS_BCAST)
GORING_ALG_TABLE(alltoallv, GORING_ALGS_ALLTOALLV)

typedef struct {
    ucc_base_coll_alg_info_t      *info;
    const ucc_base_coll_init_fn_t *inits;
} alg_table_t;

#define ALG_TABLE(_coll) {ucc_tl_goring_##_coll##_algs, ucc_tl_goring_##_coll##_inits}

/* The table of a UCC collective type; alltoall runs alltoallv's. */
static int alg_table(ucc_coll_type_t ct, alg_table_t *t)
{
    static const alg_table_t ag = ALG_TABLE(allgather), ar = ALG_TABLE(allreduce),
                             rs = ALG_TABLE(reduce_scatter), bc = ALG_TABLE(bcast),
                             a2a = ALG_TABLE(alltoallv);
    switch (ct) {
    case UCC_COLL_TYPE_ALLGATHER:      *t = ag;  return 1;
    case UCC_COLL_TYPE_ALLREDUCE:      *t = ar;  return 1;
    case UCC_COLL_TYPE_REDUCE_SCATTER: *t = rs;  return 1;
    case UCC_COLL_TYPE_BCAST:          *t = bc;  return 1;
    case UCC_COLL_TYPE_ALLTOALL:
    case UCC_COLL_TYPE_ALLTOALLV:      *t = a2a; return 1;
    default:                           return 0;
    }
}

ucc_status_t ucc_tl_goring_alg_id_to_init(int alg_id, const char *alg_id_str,
                                          ucc_coll_type_t coll_type, ucc_memory_type_t mem_type,
                                          ucc_base_coll_init_fn_t *init)
{
    alg_table_t t;
    unsigned    i;

    (void)mem_type; /* every algorithm runs on host and CUDA buffers */
    if (!alg_table(coll_type, &t)) {
        return UCC_ERR_NOT_SUPPORTED;
    }
    for (i = 0; t.info[i].name != NULL; i++) {
        if (alg_id_str != NULL ? strcmp(t.info[i].name, alg_id_str) == 0
                               : t.info[i].id == (unsigned)alg_id) {
            *init = t.inits[i];
            return UCC_OK;
        }
    }
    return UCC_ERR_INVALID_PARAM;
}

__attribute__((constructor)) static void ucc_tl_goring_algs_init(void)
{
    ucc_tl_goring.super.alg_info[ucc_ilog2(UCC_COLL_TYPE_ALLGATHER)]      = ucc_tl_goring_allgather_algs;
    ucc_tl_goring.super.alg_info[ucc_ilog2(UCC_COLL_TYPE_ALLREDUCE)]      = ucc_tl_goring_allreduce_algs;
    ucc_tl_goring.super.alg_info[ucc_ilog2(UCC_COLL_TYPE_REDUCE_SCATTER)] = ucc_tl_goring_reduce_scatter_algs;
    ucc_tl_goring.super.alg_info[ucc_ilog2(UCC_COLL_TYPE_BCAST)]          = ucc_tl_goring_bcast_algs;
    ucc_tl_goring.super.alg_info[ucc_ilog2(UCC_COLL_TYPE_ALLTOALL)]       = ucc_tl_goring_alltoallv_algs;
    ucc_tl_goring.super.alg_info[ucc_ilog2(UCC_COLL_TYPE_ALLTOALLV)]      = ucc_tl_goring_alltoallv_algs;
}
