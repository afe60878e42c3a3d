/*
 * tl_goring_coll.c: a UCC collective task of tl/goring wraps one goring
 * collective. init maps UCC's arguments onto goring_coll_args_t (anything
 * goring does not run is UCC_ERR_NOT_SUPPORTED, so UCC picks another
 * layer); post starts it and queues the task on UCC's progress queue;
 * progress polls goring_coll_test, which never blocks.
 */
#include "tl_goring.h"

#include "utils/ucc_coll_utils.h"
#include "utils/ucc_malloc.h"

/* mem_of maps UCC's memory type onto goring's: host, CUDA device memory,
 * or unknown (goring then asks the CUDA driver); managed, ROCm and the
 * rest are another team layer's. */
static int mem_of(ucc_memory_type_t mt, goring_mem_type_t *out)
{
    switch (mt) {
    case UCC_MEMORY_TYPE_HOST:    *out = GORING_MEM_HOST;    return 1;
    case UCC_MEMORY_TYPE_CUDA:    *out = GORING_MEM_CUDA;    return 1;
    case UCC_MEMORY_TYPE_UNKNOWN: *out = GORING_MEM_UNKNOWN; return 1;
    default:                      return 0;
    }
}

static int dtype_of(ucc_datatype_t dt, goring_dtype_t *out)
{
    switch (dt) {
    case UCC_DT_INT8:     *out = GORING_DT_INT8;     return 1;
    case UCC_DT_INT16:    *out = GORING_DT_INT16;    return 1;
    case UCC_DT_INT32:    *out = GORING_DT_INT32;    return 1;
    case UCC_DT_INT64:    *out = GORING_DT_INT64;    return 1;
    case UCC_DT_UINT8:    *out = GORING_DT_UINT8;    return 1;
    case UCC_DT_UINT16:   *out = GORING_DT_UINT16;   return 1;
    case UCC_DT_UINT32:   *out = GORING_DT_UINT32;   return 1;
    case UCC_DT_UINT64:   *out = GORING_DT_UINT64;   return 1;
    case UCC_DT_FLOAT16:  *out = GORING_DT_FLOAT16;  return 1;
    case UCC_DT_BFLOAT16: *out = GORING_DT_BFLOAT16; return 1;
    case UCC_DT_FLOAT32:  *out = GORING_DT_FLOAT32;  return 1;
    case UCC_DT_FLOAT64:  *out = GORING_DT_FLOAT64;  return 1;
    default:              return 0;
    }
}

static int op_of(ucc_reduction_op_t op, goring_op_t *out)
{
    switch (op) {
    case UCC_OP_SUM:  *out = GORING_OP_SUM;  return 1;
    case UCC_OP_PROD: *out = GORING_OP_PROD; return 1;
    case UCC_OP_MIN:  *out = GORING_OP_MIN;  return 1;
    case UCC_OP_MAX:  *out = GORING_OP_MAX;  return 1;
    case UCC_OP_LAND: *out = GORING_OP_LAND; return 1;
    case UCC_OP_LOR:  *out = GORING_OP_LOR;  return 1;
    case UCC_OP_BAND: *out = GORING_OP_BAND; return 1;
    case UCC_OP_BOR:  *out = GORING_OP_BOR;  return 1;
    case UCC_OP_BXOR: *out = GORING_OP_BXOR; return 1;
    default:          return 0;
    }
}

/* alltoallv_of fills goring's alltoallv arguments from UCC's info_v:
 * counts and displacements (32-bit unless UCC_COLL_ARGS_FLAG_COUNT_64BIT /
 * _DISPLACEMENTS_64BIT) widened into v, 4*size entries the caller frees
 * after goring_coll_init. NULL displacements stay NULL (packed). */
static ucc_status_t alltoallv_of(const ucc_coll_args_t *a, ucc_rank_t size, uint64_t **v,
                                 goring_coll_args_t *g)
{
    const ucc_coll_buffer_info_v_t *src = &a->src.info_v, *dst = &a->dst.info_v;
    uint64_t                       *w;
    ucc_rank_t                      i;

    if (UCC_IS_INPLACE(*a) || src->counts == NULL || dst->counts == NULL ||
        src->mem_type != dst->mem_type || src->datatype != dst->datatype) {
        return UCC_ERR_NOT_SUPPORTED;
    }
    /* 4 arrays of size entries: never true where size_t has 64 bits (size
     * is 32), kept so the product below cannot wrap elsewhere. */
    if ((size_t)size > SIZE_MAX / (4 * sizeof(uint64_t))) {
        return UCC_ERR_NO_MEMORY;
    }
    w = ucc_malloc((size_t)size * 4 * sizeof(uint64_t), "goring alltoallv counts");
    if (w == NULL) {
        return UCC_ERR_NO_MEMORY;
    }
    *v = w;
    for (i = 0; i < size; i++) {
        w[i]            = ucc_coll_args_get_count(a, src->counts, i);
        w[size + i]     = ucc_coll_args_get_count(a, dst->counts, i);
        w[2 * size + i] = src->displacements ?
                          ucc_coll_args_get_displacement(a, src->displacements, i) : 0;
        w[3 * size + i] = dst->displacements ?
                          ucc_coll_args_get_displacement(a, dst->displacements, i) : 0;
    }
    g->coll       = GORING_COLL_ALLTOALLV;
    g->src        = src->buffer;
    g->dst        = dst->buffer;
    g->src_counts = w;
    g->dst_counts = w + size;
    g->src_displs = src->displacements ? w + 2 * (size_t)size : NULL;
    g->dst_displs = dst->displacements ? w + 3 * (size_t)size : NULL;
    if (!mem_of(dst->mem_type, &g->mem)) {
        return UCC_ERR_NOT_SUPPORTED;
    }
    return dtype_of(dst->datatype, &g->dtype) ? UCC_OK : UCC_ERR_NOT_SUPPORTED;
}

/* args_of fills goring's arguments from UCC's, following UCC's counts:
 * allgather's src count is one rank's (in place, dst counts the whole
 * vector), reduce_scatter's dst count is one rank's output (in place, dst
 * holds the whole input and its count is the whole vector's), allreduce
 * counts the vector, alltoall's counts are the whole buffers (size blocks),
 * bcast has src only. Alltoallv's arrays go into *v (alltoallv_of). */
static ucc_status_t args_of(const ucc_coll_args_t *a, ucc_rank_t size, uint64_t **v,
                            goring_coll_args_t *g)
{
    const ucc_coll_buffer_info_t *src = &a->src.info, *dst = &a->dst.info;
    int                           in_place = UCC_IS_INPLACE(*a);
    ucc_memory_type_t             mem;

    memset(g, 0, sizeof(*g));
    if (a->mask & UCC_COLL_ARGS_FIELD_ACTIVE_SET) {
        return UCC_ERR_NOT_SUPPORTED;
    }
    if ((a->mask & UCC_COLL_ARGS_FIELD_FLAGS) &&
        (a->flags & UCC_COLL_ARGS_FLAG_MEM_MAPPED_BUFFERS)) {
        return UCC_ERR_NOT_SUPPORTED; /* one-sided collectives */
    }
    g->in_place = in_place;
    switch (a->coll_type) {
    case UCC_COLL_TYPE_ALLGATHER:
        g->coll  = GORING_COLL_ALLGATHER;
        g->count = in_place ? dst->count / size : src->count;
        break;
    case UCC_COLL_TYPE_ALLREDUCE:
        g->coll  = GORING_COLL_ALLREDUCE;
        g->count = dst->count;
        break;
    case UCC_COLL_TYPE_REDUCE_SCATTER:
        g->coll  = GORING_COLL_REDUCE_SCATTER;
        g->count = in_place ? dst->count / size : dst->count;
        if (in_place && dst->count % size != 0) {
            return UCC_ERR_NOT_SUPPORTED;
        }
        break;
    case UCC_COLL_TYPE_ALLTOALL:
        if (in_place || src->count != dst->count || dst->count % size != 0) {
            return UCC_ERR_NOT_SUPPORTED;
        }
        g->coll  = GORING_COLL_ALLTOALL;
        g->count = dst->count / size;
        break;
    case UCC_COLL_TYPE_ALLTOALLV:
        return alltoallv_of(a, size, v, g);
    case UCC_COLL_TYPE_BCAST:
        g->coll  = GORING_COLL_BCAST;
        g->count = src->count;
        g->root  = a->root;
        g->src   = src->buffer;
        g->dst   = src->buffer;
        if (!mem_of(src->mem_type, &g->mem)) {
            return UCC_ERR_NOT_SUPPORTED;
        }
        return dtype_of(src->datatype, &g->dtype) ? UCC_OK : UCC_ERR_NOT_SUPPORTED;
    default:
        return UCC_ERR_NOT_SUPPORTED;
    }
    g->dst = dst->buffer;
    g->src = in_place ? NULL : src->buffer;
    mem    = dst->mem_type;
    if (!in_place && src->mem_type != mem) {
        return UCC_ERR_NOT_SUPPORTED;
    }
    if (!mem_of(mem, &g->mem)) {
        return UCC_ERR_NOT_SUPPORTED;
    }
    if (!dtype_of(dst->datatype, &g->dtype) || (!in_place && src->datatype != dst->datatype)) {
        return UCC_ERR_NOT_SUPPORTED;
    }
    if ((g->coll == GORING_COLL_ALLREDUCE || g->coll == GORING_COLL_REDUCE_SCATTER) &&
        !op_of(a->op, &g->op)) {
        return UCC_ERR_NOT_SUPPORTED;
    }
    return UCC_OK;
}

static ucc_status_t ucc_tl_goring_coll_finalize(ucc_coll_task_t *coll_task)
{
    ucc_tl_goring_task_t *task = ucc_derived_of(coll_task, ucc_tl_goring_task_t);

    /* What ran, which a fallback (crossmem's, the shared GPU's) may have
     * changed since init's line. */
    tl_trace(UCC_TASK_LIB(task), "goring task %p ran: %s", task,
             goring_coll_algorithm(task->handle));
    goring_coll_finalize(task->handle);
    ucc_mpool_put(task); /* constructed once: the pool destructs at cleanup */
    return UCC_OK;
}

static void ucc_tl_goring_coll_progress(ucc_coll_task_t *coll_task)
{
    ucc_tl_goring_task_t *task = ucc_derived_of(coll_task, ucc_tl_goring_task_t);
    goring_status_t       st   = goring_coll_test(task->handle);

    if (st < 0) {
        ucc_tl_goring_log_error(UCC_TASK_LIB(task), "goring collective", st);
    }
    coll_task->status = ucc_tl_goring_status(st);
}

static ucc_status_t ucc_tl_goring_coll_post(ucc_coll_task_t *coll_task)
{
    ucc_tl_goring_task_t *task = ucc_derived_of(coll_task, ucc_tl_goring_task_t);
    goring_status_t       st   = goring_coll_post(task->handle);

    if (st != GORING_OK) {
        ucc_tl_goring_log_error(UCC_TASK_LIB(task), "goring_coll_post", st);
        coll_task->status = ucc_tl_goring_status(st);
        return coll_task->status;
    }
    coll_task->status = UCC_INPROGRESS;
    ucc_tl_goring_coll_progress(coll_task);
    if (coll_task->status == UCC_INPROGRESS) {
        return ucc_progress_queue_enqueue(UCC_TASK_CORE_CTX(coll_task)->pq, coll_task);
    }
    return ucc_task_complete(coll_task);
}

ucc_status_t ucc_tl_goring_coll_init(ucc_base_coll_args_t *coll_args, ucc_base_team_t *team,
                                     ucc_coll_task_t **task_h)
{
    return ucc_tl_goring_coll_init_alg(coll_args, team, task_h, NULL);
}

ucc_status_t ucc_tl_goring_coll_init_alg(ucc_base_coll_args_t *coll_args, ucc_base_team_t *team,
                                         ucc_coll_task_t **task_h, const char *alg)
{
    ucc_tl_goring_team_t *tl_team = ucc_derived_of(team, ucc_tl_goring_team_t);
    ucc_tl_goring_task_t *task;
    goring_coll_args_t    g;
    goring_status_t       st;
    ucc_status_t          status;
    uint64_t             *v = NULL; /* alltoallv's widened arrays */

    status = args_of(&coll_args->args, UCC_TL_TEAM_SIZE(tl_team), &v, &g);
    if (status != UCC_OK) {
        ucc_free(v);
        return status;
    }
    g.alg = alg;
    task = ucc_mpool_get(&UCC_TL_GORING_TEAM_CTX(tl_team)->tasks); /* constructed by the pool */
    if (task == NULL) {
        ucc_free(v);
        return UCC_ERR_NO_MEMORY;
    }
    task->super.flags = 0;
    st = goring_coll_init(tl_team->handle, &g, &task->handle);
    ucc_free(v); /* goring copied what it needs */
    if (st != GORING_OK) {
        if (st != GORING_ERR_NOT_SUPPORTED) {
            ucc_tl_goring_log_error(team->context->lib, "goring_coll_init", st);
        }
        ucc_mpool_put(task);
        return ucc_tl_goring_status(st);
    }
    status = ucc_coll_task_init(&task->super, coll_args, team);
    if (status != UCC_OK) {
        goring_coll_finalize(task->handle);
        ucc_mpool_put(task);
        return status;
    }
    task->super.post     = ucc_tl_goring_coll_post;
    task->super.progress = ucc_tl_goring_coll_progress;
    task->super.finalize = ucc_tl_goring_coll_finalize;
    tl_trace(team->context->lib, "goring task %p: %s", task, goring_coll_algorithm(task->handle));
    *task_h = &task->super;
    return UCC_OK;
}
