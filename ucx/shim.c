/*
 * shim.c: dlopen of libucp and thin wrappers over the UCP calls that package
 * ucx uses. Everything here runs on the caller's thread; UCX invokes the
 * callbacks below only from inside ucp_worker_progress (called by
 * gr_progress, gr_wait and gr_worker_flush), so the event
 * queue needs no lock.
 */
#define _GNU_SOURCE
#include "shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The libucp functions the shim calls. Their pointers are typed from the
 * 1.13 headers, so a mismatch is a compile error. */
#define GR_SYMBOLS(X) \
    X(ucp_config_read) \
    X(ucp_config_release) \
    X(ucp_config_modify) \
    X(ucp_get_version) \
    X(ucp_init_version) \
    X(ucp_cleanup) \
    X(ucp_context_query) \
    X(ucp_worker_create) \
    X(ucp_worker_destroy) \
    X(ucp_worker_get_address) \
    X(ucp_worker_release_address) \
    X(ucp_worker_progress) \
    X(ucp_worker_get_efd) \
    X(ucp_worker_arm) \
    X(ucp_worker_signal) \
    X(ucp_worker_flush_nbx) \
    X(ucp_ep_create) \
    X(ucp_ep_close_nbx) \
    X(ucp_tag_send_nbx) \
    X(ucp_tag_recv_nbx) \
    X(ucp_request_check_status) \
    X(ucp_request_cancel) \
    X(ucp_request_free) \
    X(ucs_status_string)

#define GR_FN(name) static __typeof__(name) *p_##name;
GR_SYMBOLS(GR_FN)
#undef GR_FN

static void *gr_lib;

int gr_loaded(const char *libname)
{
    void *h = dlopen(libname, RTLD_NOW | RTLD_NOLOAD);
    if (h == NULL) {
        return 0;
    }
    dlclose(h); /* drops only the reference NOLOAD took */
    return 1;
}

int gr_load(const char *libname, char *err, size_t errlen)
{
    /* RTLD_GLOBAL: the same visibility as linking -lucp, so UCX's own
     * transport modules and any later user of libucp share this copy. */
    void *h = dlopen(libname, RTLD_NOW | RTLD_GLOBAL);
    if (h == NULL) {
        snprintf(err, errlen,
                 "%s not found (install libucx0: apt-get install libucx0): %s",
                 libname, dlerror());
        return -1;
    }
    /* ucs_status_string lives in libucs; looking it up through the libucp
     * handle searches libucp's own dependencies, so it comes from the libucs
     * that this libucp was built with, never a second copy. */
    /* Every symbol resolves into t first and the p_ pointers change only
     * once all did: a library that lacks one is closed again, with the
     * pointers of any libucp loaded before left as they were. */
    struct {
#define GR_FIELD(name) __typeof__(name) *name;
        GR_SYMBOLS(GR_FIELD)
#undef GR_FIELD
    } t;
#define GR_SYM(name)                                                         \
    do {                                                                     \
        dlerror();                                                           \
        t.name = (__typeof__(name) *)dlsym(h, #name);                        \
        if (t.name == NULL) {                                                \
            const char *e = dlerror();                                       \
            snprintf(err, errlen, "%s: missing symbol %s (UCX 1.13 or newer needed): %s", \
                     libname, #name, e ? e : "null");                        \
            dlclose(h);                                                      \
            return -1;                                                       \
        }                                                                    \
    } while (0);
    GR_SYMBOLS(GR_SYM)
#undef GR_SYM
#define GR_SET(name) p_##name = t.name;
    GR_SYMBOLS(GR_SET)
#undef GR_SET
    gr_lib = h;
    return 0;
}

const char *gr_status_string(int status)
{
    if (gr_lib == NULL) {
        return NULL;
    }
    return p_ucs_status_string((ucs_status_t)status);
}

void gr_version(unsigned *major, unsigned *minor, unsigned *release)
{
    p_ucp_get_version(major, minor, release);
}

/* ---------------------------------------------------------------- context */

int gr_context_create(uint64_t features, const char **keys, const char **vals,
                      int nkv, int *bad_kv, ucp_context_h *out)
{
    ucp_config_t *cfg;
    ucs_status_t  st = p_ucp_config_read(NULL, NULL, &cfg);
    if (st != UCS_OK) {
        return st;
    }
    for (int i = 0; i < nkv; i++) {
        st = p_ucp_config_modify(cfg, keys[i], vals[i]);
        if (st != UCS_OK) {
            *bad_kv = i;
            p_ucp_config_release(cfg);
            return st;
        }
    }
    ucp_params_t params;
    memset(&params, 0, sizeof(params));
    params.field_mask        = UCP_PARAM_FIELD_FEATURES |
                               UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    params.features          = features;
    params.mt_workers_shared = 0;
    st = p_ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, cfg, out);
    p_ucp_config_release(cfg);
    return st;
}

void gr_context_destroy(ucp_context_h ctx)
{
    p_ucp_cleanup(ctx);
}

int gr_context_memory_types(ucp_context_h ctx, uint64_t *out)
{
    ucp_context_attr_t attr;
    memset(&attr, 0, sizeof(attr));
    attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
    ucs_status_t st = p_ucp_context_query(ctx, &attr);
    if (st == UCS_OK) {
        *out = attr.memory_types;
    }
    return st;
}

/* ----------------------------------------------------------------- worker */

/* A slot is the user_data of one posted operation: which worker's queue the
 * completion goes to and the Go handle it carries. Slots come from chunks
 * that stay put until the worker is destroyed, because UCX holds the
 * pointer while the operation is in flight. */
typedef struct gr_slot {
    gr_worker_t    *w;
    uint64_t        handle;
    uint64_t        tag;
    uint64_t        length;
    struct gr_ep   *ep_to_free; /* endpoint closes: freed when the close ends */
    struct gr_slot *next;
} gr_slot_t;

#define GR_SLOTS_PER_CHUNK 256
typedef struct gr_chunk {
    struct gr_chunk *next;
    gr_slot_t        slots[GR_SLOTS_PER_CHUNK];
} gr_chunk_t;

typedef struct {
    gr_event_t ev;
    void      *req; /* UCX request to free when the event is handed to Go */
} gr_qent_t;

struct gr_worker {
    ucp_worker_h worker;
    int          efd;       /* -1 when the context has no wakeup feature */
    int          interrupt; /* set by gr_worker_signal, consumed by gr_wait */
    gr_qent_t   *q;
    size_t       qstart, qend, qcap;
    gr_slot_t   *free_slots;
    gr_chunk_t  *chunks;
};

struct gr_ep {
    ucp_ep_h     ep;
    gr_worker_t *w;
    uint64_t     handle;
};

static void gr_push(gr_worker_t *w, int kind, uint64_t handle, void *req,
                    ucs_status_t status, uint64_t tag, uint64_t length)
{
    if (w->qend == w->qcap) {
        if (w->qstart > 0) {
            memmove(w->q, w->q + w->qstart, (w->qend - w->qstart) * sizeof(*w->q));
            w->qend -= w->qstart;
            w->qstart = 0;
        } else {
            size_t     ncap = w->qcap ? 2 * w->qcap : 256;
            gr_qent_t *nq   = realloc(w->q, ncap * sizeof(*nq));
            if (nq == NULL) {
                /* Losing a completion would hang a collective silently. */
                fprintf(stderr, "goring ucx: out of memory growing the event queue\n");
                abort();
            }
            w->q    = nq;
            w->qcap = ncap;
        }
    }
    gr_qent_t *e     = &w->q[w->qend++];
    e->ev.handle     = handle;
    e->ev.sender_tag = tag;
    e->ev.length     = length;
    e->ev.status     = status;
    e->ev.kind       = kind;
    e->req           = req;
}

static gr_slot_t *gr_slot_get(gr_worker_t *w)
{
    if (w->free_slots == NULL) {
        gr_chunk_t *c = malloc(sizeof(*c));
        if (c == NULL) {
            fprintf(stderr, "goring ucx: out of memory for operation slots\n");
            abort();
        }
        c->next   = w->chunks;
        w->chunks = c;
        for (int i = 0; i < GR_SLOTS_PER_CHUNK; i++) {
            c->slots[i].next = w->free_slots;
            w->free_slots    = &c->slots[i];
        }
    }
    gr_slot_t *s  = w->free_slots;
    w->free_slots = s->next;
    s->w          = w;
    s->ep_to_free = NULL;
    return s;
}

static void gr_slot_put(gr_slot_t *s)
{
    gr_worker_t *w = s->w;
    s->next        = w->free_slots;
    w->free_slots  = s;
}

int gr_worker_create(ucp_context_h ctx, int thread_mode, gr_worker_t **out)
{
    gr_worker_t *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    ucp_worker_params_t params;
    memset(&params, 0, sizeof(params));
    params.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    params.thread_mode = (ucs_thread_mode_t)thread_mode;
    ucs_status_t st    = p_ucp_worker_create(ctx, &params, &w->worker);
    if (st != UCS_OK) {
        free(w);
        return st;
    }
    w->efd = -1;
    if (p_ucp_worker_get_efd(w->worker, &w->efd) != UCS_OK) {
        w->efd = -1; /* no wakeup feature: gr_wait sleeps briefly instead */
    }
    *out = w;
    return UCS_OK;
}

void gr_worker_destroy(gr_worker_t *w)
{
    /* Requests whose events were never handed to Go are still ours to free. */
    for (size_t i = w->qstart; i < w->qend; i++) {
        if (w->q[i].req != NULL) {
            p_ucp_request_free(w->q[i].req);
        }
    }
    p_ucp_worker_destroy(w->worker);
    while (w->chunks != NULL) {
        gr_chunk_t *c = w->chunks;
        w->chunks     = c->next;
        free(c);
    }
    free(w->q);
    free(w);
}

int gr_worker_efd(gr_worker_t *w)
{
    return w->efd;
}

int gr_worker_address(gr_worker_t *w, void **addr, size_t *len)
{
    ucp_address_t *a;
    ucs_status_t   st = p_ucp_worker_get_address(w->worker, &a, len);
    if (st == UCS_OK) {
        *addr = a;
    }
    return st;
}

void gr_worker_release_address(gr_worker_t *w, void *addr)
{
    p_ucp_worker_release_address(w->worker, (ucp_address_t *)addr);
}

int gr_queued(gr_worker_t *w)
{
    return (int)(w->qend - w->qstart);
}

/* Hands up to cap queued events to Go, freeing their UCX requests: from
 * here on Go owns the completion and the request pointer is dead. */
static int gr_drain(gr_worker_t *w, gr_event_t *out, int cap)
{
    int n = 0;
    while (n < cap && w->qstart < w->qend) {
        gr_qent_t *e = &w->q[w->qstart++];
        if (e->req != NULL) {
            p_ucp_request_free(e->req);
        }
        out[n++] = e->ev;
    }
    if (w->qstart == w->qend) {
        w->qstart = w->qend = 0;
    }
    return n;
}

/* Runs ucp_worker_progress until it reports no more work (bounded, so a
 * steady stream of arrivals cannot keep the caller in C forever). */
static unsigned gr_progress_all(gr_worker_t *w)
{
    unsigned total = 0;
    for (int i = 0; i < 1024; i++) {
        unsigned n = p_ucp_worker_progress(w->worker);
        if (n == 0) {
            break;
        }
        total += n;
    }
    return total;
}

int gr_progress(gr_worker_t *w, gr_event_t *out, int cap)
{
    gr_progress_all(w);
    return gr_drain(w, out, cap);
}

static int64_t gr_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int gr_wait(gr_worker_t *w, int64_t timeout_us, int64_t spin_us, gr_event_t *out,
            int cap)
{
    int64_t start    = gr_now_us();
    int64_t deadline = start + timeout_us;
    /* Optional busy phase: a reply that comes within spin_us is caught
     * without the cost of arming, sleeping and being woken. */
    while (spin_us > 0 && gr_now_us() - start < spin_us && w->qstart == w->qend) {
        gr_progress_all(w);
    }
    for (;;) {
        if (w->qstart == w->qend) {
            gr_progress_all(w);
        }
        if (w->qstart < w->qend) {
            return gr_drain(w, out, cap);
        }
        if (__atomic_exchange_n(&w->interrupt, 0, __ATOMIC_ACQ_REL)) {
            return 0;
        }
        int64_t left = deadline - gr_now_us();
        if (left <= 0) {
            return 0;
        }
        if (w->efd < 0) {
            struct timespec ts = {0, 100000}; /* 100 us */
            nanosleep(&ts, NULL);
            continue;
        }
        ucs_status_t st = p_ucp_worker_arm(w->worker);
        if (st == UCS_ERR_BUSY) {
            continue; /* events arrived since the last progress */
        }
        if (st != UCS_OK) {
            return st;
        }
        struct pollfd pfd = {.fd = w->efd, .events = POLLIN};
        int           ms  = (int)((left + 999) / 1000);
        if (poll(&pfd, 1, ms) < 0 && errno != EINTR) {
            return UCS_ERR_IO_ERROR;
        }
    }
}

int gr_worker_arm(gr_worker_t *w)
{
    return p_ucp_worker_arm(w->worker);
}

int gr_worker_signal(gr_worker_t *w)
{
    __atomic_store_n(&w->interrupt, 1, __ATOMIC_RELEASE);
    return p_ucp_worker_signal(w->worker);
}

/* Waits for a request that carries no callback, progressing the worker
 * (completions of other operations are queued, not lost). On timeout the
 * request is released to UCX, which frees it when it finishes. */
static int gr_wait_plain_request(gr_worker_t *w, ucs_status_ptr_t r, int64_t timeout_us)
{
    if (!UCS_PTR_IS_PTR(r)) {
        return UCS_PTR_STATUS(r);
    }
    int64_t      deadline = gr_now_us() + timeout_us;
    ucs_status_t st;
    while ((st = p_ucp_request_check_status(r)) == UCS_INPROGRESS) {
        if (gr_progress_all(w) == 0 && gr_now_us() > deadline) {
            p_ucp_request_free(r);
            return UCS_ERR_TIMED_OUT;
        }
    }
    p_ucp_request_free(r);
    return st;
}

int gr_worker_flush(gr_worker_t *w, int64_t timeout_us)
{
    ucp_request_param_t param;
    memset(&param, 0, sizeof(param));
    return gr_wait_plain_request(w, p_ucp_worker_flush_nbx(w->worker, &param), timeout_us);
}

/* -------------------------------------------------------------- endpoints */

static void gr_ep_error_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)ep;
    gr_ep_t *e = arg;
    gr_push(e->w, GR_EV_EP_ERROR, e->handle, NULL, status, 0, 0);
}

int gr_ep_create(gr_worker_t *w, const void *addr, int peer_errors, uint64_t handle,
                 gr_ep_t **out)
{
    gr_ep_t *e = calloc(1, sizeof(*e));
    if (e == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    e->w      = w;
    e->handle = handle;
    ucp_ep_params_t params;
    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                        UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.address         = (const ucp_address_t *)addr;
    params.err_mode        = peer_errors ? UCP_ERR_HANDLING_MODE_PEER
                                         : UCP_ERR_HANDLING_MODE_NONE;
    params.err_handler.cb  = gr_ep_error_cb;
    params.err_handler.arg = e;
    ucs_status_t st        = p_ucp_ep_create(w->worker, &params, &e->ep);
    if (st != UCS_OK) {
        free(e);
        return st;
    }
    *out = e;
    return UCS_OK;
}

/* --------------------------------------------------------- tag operations */

static void gr_send_cb(void *request, ucs_status_t status, void *user_data)
{
    gr_slot_t *s = user_data;
    gr_push(s->w, GR_EV_OP, s->handle, request, status, s->tag, s->length);
    /* A finished close: UCX calls the endpoint's error handler no more. */
    free(s->ep_to_free);
    gr_slot_put(s);
}

static void gr_recv_cb(void *request, ucs_status_t status,
                       const ucp_tag_recv_info_t *info, void *user_data)
{
    gr_slot_t *s   = user_data;
    uint64_t   tag = info ? info->sender_tag : 0;
    uint64_t   len = info ? info->length : 0;
    gr_push(s->w, GR_EV_OP, s->handle, request, status, tag, len);
    gr_slot_put(s);
}

static void gr_set_mem_type(ucp_request_param_t *p, int mem_type)
{
    if (mem_type >= 0 && mem_type != UCS_MEMORY_TYPE_UNKNOWN) {
        p->op_attr_mask |= UCP_OP_ATTR_FIELD_MEMORY_TYPE;
        p->memory_type = (ucs_memory_type_t)mem_type;
    }
}

int gr_tag_send(gr_worker_t *w, gr_ep_t *ep, uintptr_t buf, size_t len,
                uint64_t tag, int mem_type, uint64_t handle, void **req)
{
    gr_slot_t *s = gr_slot_get(w);
    s->handle = handle;
    s->tag    = tag;
    s->length = len;
    ucp_request_param_t param;
    memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send      = gr_send_cb;
    param.user_data    = s;
    gr_set_mem_type(&param, mem_type);
    /* Device memory never takes UCX's inline send: that fast path copies
     * from the buffer with the CPU whenever UCX's own registry of device
     * allocations (filled by hooking the CUDA allocator, which goring's
     * dlopen'd driver calls bypass) looks empty, whatever memory type the
     * caller passed; on GPU memory it faults (seen with UCX 1.22 on H100).
     * A request always goes through protocol selection by memory type. */
    if (mem_type > 0) {
        param.op_attr_mask |= UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    }
    ucs_status_ptr_t r = p_ucp_tag_send_nbx(ep->ep, (void *)buf, len, tag, &param);
    if (UCS_PTR_IS_PTR(r)) {
        *req = r;
        return 1;
    }
    /* Finished (or failed) at once: UCX does not call the callback, so the
     * completion is queued here and reaches Go on the next progress. */
    gr_push(w, GR_EV_OP, handle, NULL, UCS_PTR_STATUS(r), tag, len);
    gr_slot_put(s);
    return UCS_PTR_STATUS(r);
}

int gr_tag_recv(gr_worker_t *w, uintptr_t buf, size_t len, uint64_t tag,
                uint64_t mask, int mem_type, uint64_t handle, void **req)
{
    gr_slot_t *s = gr_slot_get(w);
    s->handle = handle;
    /* NO_IMM_CMPL: a receive matched at once (an unexpected message already
     * here) still goes through the callback, the one place where UCX 1.13
     * reports the matched tag and length reliably. The callback may run
     * before ucp_tag_recv_nbx returns; the slot already carries the handle. */
    ucp_request_param_t param;
    memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                         UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    param.cb.recv      = gr_recv_cb;
    param.user_data    = s;
    gr_set_mem_type(&param, mem_type);
    ucs_status_ptr_t r = p_ucp_tag_recv_nbx(w->worker, (void *)buf, len, tag, mask, &param);
    if (UCS_PTR_IS_PTR(r)) {
        *req = r;
        return 1;
    }
    gr_push(w, GR_EV_OP, handle, NULL, UCS_PTR_STATUS(r), 0, 0);
    gr_slot_put(s);
    return UCS_PTR_STATUS(r);
}

/* ------------------------------------------------ operations for C callers */

/* The user data of a C caller's operation is its own gr_cop_t, so these
 * callbacks touch neither the slot table nor the event queue, and Go never
 * hears of the operation. */

/* The operation whose post is under way on this thread, and whether its
 * callback already ran inside that post (a receive that matched a waiting
 * message, under NO_IMM_CMPL). Then the callback has freed the request
 * that ucp_tag_*_nbx still returns, and the post must not hand it to the
 * caller: UCX gives the same memory to the next operation on the worker,
 * which a later cancel of the stale pointer would hit. */
static __thread gr_cop_t *gr_c_posting;
static __thread int       gr_c_fired;

static void gr_c_complete(void *request, gr_cop_t *op, ucs_status_t status,
                          uint64_t length)
{
    if (op == gr_c_posting) {
        gr_c_fired = 1;
    }
    p_ucp_request_free(request);
    op->done(op, status, length);
}

static void gr_send_c_cb(void *request, ucs_status_t status, void *user_data)
{
    gr_c_complete(request, user_data, status, 0);
}

static void gr_recv_c_cb(void *request, ucs_status_t status,
                         const ucp_tag_recv_info_t *info, void *user_data)
{
    gr_c_complete(request, user_data, status, info ? info->length : 0);
}

/* Ends a C caller's post: *req is set only while the callback is still
 * due. The previous marker is restored, for a post made from inside a
 * done callback. */
static int gr_c_posted(ucs_status_ptr_t r, gr_cop_t *prev, int prev_fired,
                       void **req)
{
    int fired    = gr_c_fired;
    gr_c_posting = prev;
    gr_c_fired   = prev_fired;
    if (!UCS_PTR_IS_PTR(r)) {
        return UCS_PTR_STATUS(r);
    }
    if (!fired) {
        *req = r;
    }
    return UCS_INPROGRESS;
}

int gr_tag_send_c(gr_ep_t *ep, const void *buf, size_t len, uint64_t tag,
                  gr_cop_t *op, void **req)
{
    ucp_request_param_t param;
    memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                         UCP_OP_ATTR_FIELD_MEMORY_TYPE;
    param.cb.send      = gr_send_c_cb;
    param.user_data    = op;
    param.memory_type  = UCS_MEMORY_TYPE_HOST;
    gr_cop_t *prev       = gr_c_posting;
    int       prev_fired = gr_c_fired;
    gr_c_posting         = op;
    gr_c_fired           = 0;
    ucs_status_ptr_t r   = p_ucp_tag_send_nbx(ep->ep, buf, len, tag, &param);
    return gr_c_posted(r, prev, prev_fired, req);
}

int gr_tag_recv_c(gr_worker_t *w, void *buf, size_t len, uint64_t tag,
                  gr_cop_t *op, void **req)
{
    /* NO_IMM_CMPL: the received length arrives in the callback only. */
    ucp_request_param_t param;
    memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                         UCP_OP_ATTR_FIELD_MEMORY_TYPE | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    param.cb.recv      = gr_recv_c_cb;
    param.user_data    = op;
    param.memory_type  = UCS_MEMORY_TYPE_HOST;
    gr_cop_t *prev       = gr_c_posting;
    int       prev_fired = gr_c_fired;
    gr_c_posting         = op;
    gr_c_fired           = 0;
    ucs_status_ptr_t r   = p_ucp_tag_recv_nbx(w->worker, buf, len, tag, ~(ucp_tag_t)0, &param);
    return gr_c_posted(r, prev, prev_fired, req);
}

unsigned gr_progress_c(gr_worker_t *w)
{
    /* One pass, as UCC's own layers progress their worker once per test:
     * a C caller tests again soon, and a second pass that finds nothing
     * costs a small collective as much as its reduction. */
    return p_ucp_worker_progress(w->worker);
}

int gr_request_status(void *req)
{
    return p_ucp_request_check_status(req);
}

void gr_request_cancel(gr_worker_t *w, void *req)
{
    p_ucp_request_cancel(w->worker, req);
}

/* ------------------------------------------------------- endpoint close */

int gr_ep_close(gr_ep_t *e, int force, uint64_t handle, void **req)
{
    gr_worker_t *w = e->w;
    gr_slot_t   *s = gr_slot_get(w);
    s->handle     = handle;
    s->tag        = 0;
    s->length     = 0;
    s->ep_to_free = e;
    ucp_request_param_t param;
    memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                         UCP_OP_ATTR_FIELD_FLAGS;
    param.cb.send      = gr_send_cb;
    param.user_data    = s;
    param.flags        = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    ucs_status_ptr_t r = p_ucp_ep_close_nbx(e->ep, &param);
    if (UCS_PTR_IS_PTR(r)) {
        *req = r;
        return 1;
    }
    gr_push(w, GR_EV_OP, handle, NULL, UCS_PTR_STATUS(r), 0, 0);
    free(e);
    gr_slot_put(s);
    return UCS_PTR_STATUS(r);
}
