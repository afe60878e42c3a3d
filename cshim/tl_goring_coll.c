/*
 * tl_goring_coll.c: a UCC collective task of tl/goring wraps one goring
 * collective (a one-sided alltoallv two, see onesided_alltoallv_init).
 * init maps UCC's arguments onto goring_coll_args_t (anything goring does
 * not run is UCC_ERR_NOT_SUPPORTED, so UCC picks another layer); post
 * starts it and queues the task on UCC's progress queue; progress polls
 * goring_coll_test, which never blocks.
 */
#include "tl_goring.h"

#include "core/ucc_ee.h"
#include "schedule/ucc_schedule.h"
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

/* is_one_sided: UCC_COLL_ARGS_FLAG_MEM_MAPPED_BUFFERS, UCC's one-sided
 * alltoall and alltoallv (src and dst in memory the context mapped). */
static int is_one_sided(const ucc_coll_args_t *a)
{
    return (a->mask & UCC_COLL_ARGS_FIELD_FLAGS) &&
           (a->flags & UCC_COLL_ARGS_FLAG_MEM_MAPPED_BUFFERS);
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
static ucc_status_t args_of(ucc_base_lib_t *lib, const ucc_coll_args_t *a, ucc_rank_t size,
                            uint64_t **v, goring_coll_args_t *g)
{
    const ucc_coll_buffer_info_t *src = &a->src.info, *dst = &a->dst.info;
    int                           in_place = UCC_IS_INPLACE(*a);
    ucc_memory_type_t             mem;

    memset(g, 0, sizeof(*g));
    if (a->mask & UCC_COLL_ARGS_FIELD_ACTIVE_SET) {
        return UCC_ERR_NOT_SUPPORTED;
    }
    if (is_one_sided(a) && a->coll_type != UCC_COLL_TYPE_ALLTOALL) {
        /* One-sided alltoallv has its own init (onesided_alltoallv_init);
         * one-sided alltoall means what the two-sided one does (below). The
         * flag on any other collective is another layer's. */
        return UCC_ERR_NOT_SUPPORTED;
    }
    g->in_place = in_place;
    switch (a->coll_type) {
    case UCC_COLL_TYPE_ALLGATHER:
        g->coll  = GORING_COLL_ALLGATHER;
        g->count = in_place ? dst->count / size : src->count;
        /* dst holds size blocks of the rank's count; other counts are no
         * allgather: in place, the division above would drop dst's tail
         * unwritten, and not in place, goring would write size*src count
         * elements past a shorter dst. dst's count is the same on every
         * rank (UCC's contract), so every rank refuses alike. */
        if (dst->count % size != 0 || (!in_place && dst->count / size != src->count)) {
            tl_error(lib, "allgather%s: dst count %llu is not %u blocks of %llu elements",
                     in_place ? " in place" : "", (unsigned long long)dst->count, (unsigned)size,
                     (unsigned long long)g->count);
            return UCC_ERR_INVALID_PARAM;
        }
        break;
    case UCC_COLL_TYPE_ALLREDUCE:
        g->coll  = GORING_COLL_ALLREDUCE;
        g->count = dst->count;
        /* goring reads dst count elements of src: a shorter src would be
         * read past its end (every rank has the same counts). */
        if (!in_place && src->count < dst->count) {
            tl_error(lib, "allreduce: src count %llu is below dst count %llu", (unsigned long long)src->count,
                     (unsigned long long)dst->count);
            return UCC_ERR_INVALID_PARAM;
        }
        break;
    case UCC_COLL_TYPE_REDUCE_SCATTER:
        g->coll  = GORING_COLL_REDUCE_SCATTER;
        g->count = in_place ? dst->count / size : dst->count;
        if (in_place && dst->count % size != 0) {
            return UCC_ERR_NOT_SUPPORTED;
        }
        /* src holds size blocks of dst count: goring reads them all. */
        if (!in_place && src->count / size < dst->count) {
            tl_error(lib, "reduce_scatter: src count %llu is below %u blocks of dst count %llu",
                     (unsigned long long)src->count, (unsigned)size, (unsigned long long)dst->count);
            return UCC_ERR_INVALID_PARAM;
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
        /* UCC's root is 64 bits, goring's 32: a root outside the team is
         * refused here, before its high bits are dropped and it names a
         * rank (every rank has the same root, so every rank refuses). */
        if (a->root >= size) {
            tl_error(lib, "bcast: root %llu is no rank of a team of %u", (unsigned long long)a->root,
                     (unsigned)size);
            return UCC_ERR_INVALID_PARAM;
        }
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

/*
 * One-sided alltoallv (UCC_COLL_ARGS_FLAG_MEM_MAPPED_BUFFERS).
 *
 * UCC 1.8 gives it a meaning of its own (tl/ucp's onesided algorithm puts
 * by it, ucc_test_mpi checks it): src counts and displacements are this
 * rank's, as in the two-sided call, and dst counts what this rank receives
 * from each rank, but dst displacement j is where this rank's block goes in
 * rank j's dst, not where rank j's block lands here. So no rank's own
 * arguments say where its incoming blocks go. goring moves the data
 * two-sided and learns that first, with two goring calls posted back to
 * back (a team runs its calls one at a time in post order, goring.h, so no
 * other call comes between them on any rank):
 *
 *   1. an alltoall of two uint64 per peer: to rank j, how many bytes this
 *      rank sends it and at which byte of rank j's dst they go;
 *   2. the alltoallv itself, in bytes, into a private buffer packed by this
 *      rank's dst counts.
 *
 * When both are complete, each rank's block is copied from the private
 * buffer to dst at the offset its sender gave, once every sender's byte
 * count is checked against this rank's dst count for it (a mismatch fails
 * the call, UCC_ERR_INVALID_PARAM, dst untouched). dst is taken to sit at
 * the same place of every rank's mapped memory, as UCC's one-sided model
 * has it (tl/ucp puts at this rank's dst offset in the peer's mapping), so
 * writing the receiver's own dst is writing where the put would land.
 *
 * Elements are bytes to goring here: src counts and displacements times
 * the src type's size, dst ones times the dst type's, as tl/ucp's puts
 * take them. So every type of fixed size runs (complex and 128-bit ones
 * included, which goring's own calls refuse): alltoallv only moves bytes,
 * and a refusal would hand the call to UCC's fallback (docs/ucc.md).
 *
 * The global work buffer is left as the caller gave it: zeroed, as tl/ucp's
 * algorithm leaves it when it completes. Completion means what the
 * one-sided call's does: this rank's dst holds every block, its src is
 * free again.
 */
typedef struct onesided_task {
    ucc_coll_task_t super;
    goring_coll_h   xchg; /* 1: the (bytes, offset) alltoall */
    goring_coll_h   data; /* 2: the alltoallv into scratch */
    int             have_xchg, have_data;
    int             xchg_done, data_done;
    ucc_rank_t      size;
    uint64_t       *pairs;   /* 4*size: the pairs sent, then those received */
    uint64_t       *expect;  /* size: bytes from each rank (dst counts) */
    char           *scratch; /* the blocks received, packed in rank order */
    char           *dst;
} onesided_task_t;

/* Largest byte count or offset taken: 2^61, so that every sum below stays
 * inside 64 bits (goring's own bound). */
#define ONESIDED_MAX_BYTES (UINT64_C(1) << 61)

/* onesided_bytes is n elements of esize bytes, or 0 with *ok cleared when
 * that passes ONESIDED_MAX_BYTES. */
static uint64_t onesided_bytes(uint64_t n, size_t esize, int *ok)
{
    if (n > ONESIDED_MAX_BYTES / esize) {
        *ok = 0;
        return 0;
    }
    return n * esize;
}

static void onesided_free(onesided_task_t *task)
{
    if (task->have_xchg) {
        goring_coll_finalize(task->xchg);
    }
    if (task->have_data) {
        goring_coll_finalize(task->data);
    }
    ucc_free(task->pairs);
    ucc_free(task->expect);
    ucc_free(task->scratch);
    ucc_coll_task_destruct(&task->super);
    ucc_free(task);
}

/* onesided_place checks what every sender said against this rank's dst
 * counts, then copies each block to its place in dst. */
static ucc_status_t onesided_place(onesided_task_t *task)
{
    const uint64_t *got = task->pairs + 2 * (size_t)task->size;
    size_t          at  = 0;
    ucc_rank_t      i;

    for (i = 0; i < task->size; i++) {
        if (got[2 * i] != task->expect[i] || got[2 * i + 1] > ONESIDED_MAX_BYTES) {
            tl_error(UCC_TASK_LIB(&task->super),
                     "one-sided alltoallv: rank %u sends %llu bytes to offset %llu, this "
                     "rank's dst counts expect %llu", (unsigned)i,
                     (unsigned long long)got[2 * i], (unsigned long long)got[2 * i + 1],
                     (unsigned long long)task->expect[i]);
            return UCC_ERR_INVALID_PARAM;
        }
    }
    for (i = 0; i < task->size; i++) {
        if (task->expect[i] > 0) {
            memcpy(task->dst + got[2 * i + 1], task->scratch + at, task->expect[i]);
        }
        at += task->expect[i];
    }
    return UCC_OK;
}

/* onesided_test tests one of the two calls: 1 when it is complete, 0 while
 * it is not, -1 (task status set) when it failed. */
static int onesided_test(onesided_task_t *task, goring_coll_h h, int *done)
{
    goring_status_t st;

    if (*done) {
        return 1;
    }
    st = goring_coll_test(h);
    if (st < 0) {
        ucc_tl_goring_log_error(UCC_TASK_LIB(&task->super), "goring one-sided alltoallv", st);
        task->super.status = ucc_tl_goring_status(st);
        return -1;
    }
    *done = st == GORING_OK;
    return *done;
}

static void onesided_progress(ucc_coll_task_t *coll_task)
{
    onesided_task_t *task = ucc_derived_of(coll_task, onesided_task_t);
    int              x, d;

    x = onesided_test(task, task->xchg, &task->xchg_done);
    if (x < 0) {
        return;
    }
    d = onesided_test(task, task->data, &task->data_done);
    if (d < 0) {
        return;
    }
    coll_task->status = (x && d) ? onesided_place(task) : UCC_INPROGRESS;
}

static ucc_status_t onesided_post(ucc_coll_task_t *coll_task)
{
    onesided_task_t *task = ucc_derived_of(coll_task, onesided_task_t);
    goring_status_t  st;

    task->xchg_done = task->data_done = 0;
    st = goring_coll_post(task->xchg);
    if (st == GORING_OK) {
        st = goring_coll_post(task->data);
    }
    if (st != GORING_OK) {
        ucc_tl_goring_log_error(UCC_TASK_LIB(coll_task), "goring_coll_post", st);
        coll_task->status = ucc_tl_goring_status(st);
        return coll_task->status;
    }
    coll_task->status = UCC_INPROGRESS;
    onesided_progress(coll_task);
    if (coll_task->status == UCC_INPROGRESS) {
        return ucc_progress_queue_enqueue(UCC_TASK_CORE_CTX(coll_task)->pq, coll_task);
    }
    return ucc_task_complete(coll_task);
}

static ucc_status_t onesided_finalize(ucc_coll_task_t *coll_task)
{
    onesided_task_t *task = ucc_derived_of(coll_task, onesided_task_t);

    tl_trace(UCC_TASK_LIB(coll_task), "goring task %p ran: one-sided alltoallv, %s", task,
             goring_coll_algorithm(task->data));
    onesided_free(task);
    return UCC_OK;
}

static ucc_status_t onesided_alltoallv_init(ucc_base_coll_args_t *coll_args, ucc_base_team_t *team,
                                            ucc_coll_task_t **task_h, const char *alg)
{
    ucc_tl_goring_team_t           *tl_team = ucc_derived_of(team, ucc_tl_goring_team_t);
    const ucc_coll_args_t          *a       = &coll_args->args;
    const ucc_coll_buffer_info_v_t *src     = &a->src.info_v, *dst = &a->dst.info_v;
    ucc_base_lib_t                 *lib     = team->context->lib;
    ucc_rank_t                      size    = UCC_TL_TEAM_SIZE(tl_team);
    int                             ok      = 1;
    onesided_task_t                *task;
    goring_coll_args_t              g;
    goring_status_t                 st;
    ucc_status_t                    status;
    uint64_t                       *w = NULL, total = 0;
    size_t                          ssize, dsize;
    ucc_rank_t                      i;

    /* Host memory only: the private buffer and the copy out of it are the
     * host's. Types of fixed size only (tl/ucp's puts take the same). */
    if (UCC_IS_INPLACE(*a) || src->counts == NULL || dst->counts == NULL ||
        src->mem_type != UCC_MEMORY_TYPE_HOST || dst->mem_type != UCC_MEMORY_TYPE_HOST ||
        !(UCC_DT_IS_PREDEFINED(src->datatype) || UCC_DT_IS_CONTIG(src->datatype)) ||
        !(UCC_DT_IS_PREDEFINED(dst->datatype) || UCC_DT_IS_CONTIG(dst->datatype))) {
        return UCC_ERR_NOT_SUPPORTED;
    }
    ssize = ucc_dt_size(src->datatype);
    dsize = ucc_dt_size(dst->datatype);
    if (ssize == 0 || dsize == 0) {
        return UCC_ERR_NOT_SUPPORTED;
    }
    if (dst->displacements == NULL) {
        tl_error(lib, "one-sided alltoallv without dst displacements (where its blocks go at "
                      "the peers)");
        return UCC_ERR_INVALID_PARAM;
    }
    /* Never true where size_t has 64 bits (size is 32), kept so that the
     * products below cannot wrap elsewhere. */
    if ((size_t)size > SIZE_MAX / (4 * sizeof(uint64_t))) {
        return UCC_ERR_NO_MEMORY;
    }
    if ((st = ucc_tl_goring_team_go(tl_team)) != GORING_OK) { /* a lazy team's first call */
        return ucc_tl_goring_status(st);
    }
    task = ucc_calloc(1, sizeof(*task), "goring one-sided alltoallv");
    if (task == NULL) {
        return UCC_ERR_NO_MEMORY;
    }
    ucc_coll_task_construct(&task->super);
    task->size   = size;
    task->dst    = dst->buffer;
    task->pairs  = ucc_malloc((size_t)size * 4 * sizeof(uint64_t), "goring one-sided pairs");
    task->expect = ucc_malloc((size_t)size * sizeof(uint64_t), "goring one-sided counts");
    w            = ucc_malloc((size_t)size * 2 * sizeof(uint64_t), "goring one-sided src");
    if (task->pairs == NULL || task->expect == NULL || w == NULL) {
        status = UCC_ERR_NO_MEMORY;
        goto fail;
    }
    for (i = 0; i < size; i++) {
        w[i]        = onesided_bytes(ucc_coll_args_get_count(a, src->counts, i), ssize, &ok);
        w[size + i] = src->displacements ?
                      onesided_bytes(ucc_coll_args_get_displacement(a, src->displacements, i),
                                     ssize, &ok) : 0;
        task->pairs[2 * i]     = w[i];
        task->pairs[2 * i + 1] =
            onesided_bytes(ucc_coll_args_get_displacement(a, dst->displacements, i), dsize, &ok);
        task->expect[i] = onesided_bytes(ucc_coll_args_get_count(a, dst->counts, i), dsize, &ok);
        if (!ok || task->expect[i] > ONESIDED_MAX_BYTES - total) {
            tl_error(lib, "one-sided alltoallv: counts or displacements overflow");
            status = UCC_ERR_INVALID_PARAM;
            goto fail;
        }
        total += task->expect[i];
    }
    if (total > 0) {
        task->scratch = ucc_malloc((size_t)total, "goring one-sided blocks");
        if (task->scratch == NULL) {
            status = UCC_ERR_NO_MEMORY;
            goto fail;
        }
    }

    memset(&g, 0, sizeof(g));
    g.coll  = GORING_COLL_ALLTOALL;
    g.src   = task->pairs;
    g.dst   = task->pairs + 2 * (size_t)size;
    g.count = 2;
    g.dtype = GORING_DT_UINT64;
    g.mem   = GORING_MEM_HOST;
    st      = goring_coll_init(tl_team->handle, &g, &task->xchg);
    if (st != GORING_OK) {
        goto fail_goring;
    }
    task->have_xchg = 1;

    memset(&g, 0, sizeof(g));
    g.coll       = GORING_COLL_ALLTOALLV;
    g.src        = src->buffer;
    g.dst        = task->scratch;
    g.src_counts = w;
    g.src_displs = src->displacements ? w + size : NULL;
    g.dst_counts = task->expect;
    g.dst_displs = NULL; /* packed */
    g.dtype      = GORING_DT_UINT8;
    g.mem        = GORING_MEM_HOST;
    g.alg        = alg;
    st           = goring_coll_init(tl_team->handle, &g, &task->data);
    if (st != GORING_OK) {
        goto fail_goring;
    }
    task->have_data = 1;
    ucc_free(w); /* goring copied what it needs */
    w = NULL;

    status = ucc_coll_task_init(&task->super, coll_args, team);
    if (status != UCC_OK) {
        goto fail;
    }
    task->super.post     = onesided_post;
    task->super.progress = onesided_progress;
    task->super.finalize = onesided_finalize;
    tl_trace(lib, "goring task %p: one-sided alltoallv, %s", task,
             goring_coll_algorithm(task->data));
    *task_h = &task->super;
    return UCC_OK;

fail_goring:
    if (st != GORING_ERR_NOT_SUPPORTED) {
        ucc_tl_goring_log_error(lib, "goring_coll_init (one-sided alltoallv)", st);
    }
    status = ucc_tl_goring_status(st);
fail:
    ucc_free(w);
    onesided_free(task);
    return status;
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

/*
 * Triggered post on a CUDA stream (ucc_collective_triggered_post; PyTorch's
 * UCC backend posts its CUDA collectives so). Where goring runs the call
 * as node kernels, they go straight onto the caller's stream
 * (goring_coll_post_stream): they start when the caller's earlier work on
 * it has, the caller's later work waits for them, and no executor kernel
 * or host wait sits between. A team's first such calls set the team up
 * first, off the stream (goring_coll_prepare_stream: the set-up's GPU
 * allocations could wait behind a held stream). Every other call takes
 * UCC's generic triggered post, which holds the stream with an executor's
 * wait until the task completes and posts the task as usual. Either way the post event is
 * on the execution engine when this returns, as the caller expects.
 */
static ucc_status_t ucc_tl_goring_triggered_post(ucc_ee_h ee, ucc_ev_t *ev,
                                                 ucc_coll_task_t *coll_task)
{
    ucc_tl_goring_task_t *task = ucc_derived_of(coll_task, ucc_tl_goring_task_t);
    ucc_ev_t              post_ev;
    goring_status_t       st;

    if (ee->ee_type != UCC_EE_CUDA_STREAM || ev->ev_type != UCC_EVENT_COMPUTE_COMPLETE) {
        return ucc_triggered_post(ee, ev, coll_task);
    }
    st = goring_coll_post_stream(task->handle, ee->ee_context);
    if (st == GORING_ERR_NOT_SUPPORTED) {
        /* The team's first calls: set up now, off the stream, then on it.
         * A set-up that failed (an exchange, a link) fails the call: UCC's
         * post would start the set-up again on this rank alone. */
        goring_status_t prep = goring_coll_prepare_stream(task->handle);
        if (prep == GORING_OK) {
            st = goring_coll_post_stream(task->handle, ee->ee_context);
        } else if (prep != GORING_ERR_NOT_SUPPORTED) {
            st = prep;
        }
    }
    if (st == GORING_ERR_NOT_SUPPORTED) {
        if (((ucc_base_lib_t *)UCC_TASK_LIB(task))->log_component.log_level >= UCC_LOG_LEVEL_DEBUG) {
            char why[256];
            goring_last_error(why, sizeof(why));
            tl_debug(UCC_TASK_LIB(task), "goring task %p: UCC's triggered post (%s)", task, why);
        }
        return ucc_triggered_post(ee, ev, coll_task);
    }
    if (st != GORING_OK) {
        ucc_tl_goring_log_error(UCC_TASK_LIB(task), "goring_coll_post_stream", st);
        coll_task->status = ucc_tl_goring_status(st);
        return coll_task->status;
    }
    tl_debug(UCC_TASK_LIB(task), "goring task %p: on the caller's stream %p", task, ee->ee_context);
    coll_task->ee        = ee;
    coll_task->status    = UCC_INPROGRESS;
    post_ev.ev_type         = UCC_EVENT_COLLECTIVE_POST;
    post_ev.ev_context_size = 0;
    post_ev.ev_context      = NULL;
    post_ev.req             = &coll_task->super;
    ucc_ee_set_event_internal(ee, &post_ev, &ee->event_out_queue);
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

    /* A pipelined schedule of UCC's (CL/hier's fragmented allreduce,
     * reduce and bcast) makes a call once, for its largest fragment, and
     * rewrites its buffers and count before each post. goring takes a
     * call's buffers and counts when it is made, so each fragment would
     * repeat the first one's: such a call is the next layer's. */
    if (coll_args->mask & UCC_BASE_CARGS_MAX_FRAG_COUNT) {
        tl_debug(UCC_TL_TEAM_LIB(tl_team), "a fragment of a pipelined schedule: not goring's");
        return UCC_ERR_NOT_SUPPORTED;
    }
    if (coll_args->args.coll_type == UCC_COLL_TYPE_ALLTOALLV && is_one_sided(&coll_args->args)) {
        return onesided_alltoallv_init(coll_args, team, task_h, alg);
    }
    status = args_of(team->context->lib, &coll_args->args, UCC_TL_TEAM_SIZE(tl_team), &v, &g);
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
    st = GORING_IN_TEAM;
    if (tl_team->ct != NULL) { /* the context path: no Go for shapes it knows */
        st = goring_cteam_coll_init(tl_team->ct, tl_team->handle, &g, &task->handle);
        if (st == GORING_NEED_TEAM && (st = ucc_tl_goring_team_go(tl_team)) == GORING_OK) {
            st = goring_cteam_coll_init(tl_team->ct, tl_team->handle, &g, &task->handle);
        }
    }
    if (st == GORING_IN_TEAM) {
        st = ucc_tl_goring_team_go(tl_team); /* a lazy team's first call: made in Go now */
        if (st == GORING_OK) {
            st = goring_coll_init(tl_team->handle, &g, &task->handle);
        }
    }
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
    task->super.post           = ucc_tl_goring_coll_post;
    task->super.triggered_post = ucc_tl_goring_triggered_post;
    task->super.progress       = ucc_tl_goring_coll_progress;
    task->super.finalize       = ucc_tl_goring_coll_finalize;
    tl_trace(team->context->lib, "goring task %p: %s", task, goring_coll_algorithm(task->handle));
    *task_h = &task->super;
    return UCC_OK;
}
