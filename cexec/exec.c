/*
 * exec.c: the C executor (cexec.h). The rules are exec.Machine's
 * (exec/machine.go), in the same words: a step waits for its dependencies
 * and, if it is a send or receive, for the previous step of its (op, peer,
 * tag) chain to be posted; ready receives are posted before ready sends;
 * local steps run when ready; a receive of another length than posted, or
 * a failed operation, fails the call.
 */
#define _GNU_SOURCE
#include "cexec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ucs_status_t values the executor names (ucs/type/status.h). */
#define GX_UCS_OK         0
#define GX_UCS_INPROGRESS 1
#define GX_UCS_NO_ELEM    (-12)
#define GX_UCS_BUSY       (-15)
#define GX_UCS_CANCELED   (-16)

/* A call's tag in its team's layout (gx_tags_t). */
static inline uint64_t gx_tag(const gx_team_t *t, int32_t sender, uint32_t seq, uint32_t step)
{
    return t->tags.base | (uint64_t)sender << t->tags.sender_shift |
           (uint64_t)(seq & t->tags.seq_mask) << t->tags.seq_shift | step;
}

/* GX_WATCH_US (how long a call waits before its peers are checked) and
 * GX_CANCEL_US (how long a cancel waits for UCX to let go of buffers):
 * generated from Go's exec.WatchEvery and exec.CancelWait. */
#include "constants.h"

enum { ST_WAITING = 0, ST_READY, ST_INFLIGHT, ST_DONE };

static int64_t gx_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---------------------------------------------------------------- programs */

gx_prog_t *gx_prog_new(int32_t nsteps, int32_t ndeps)
{
    size_t     n = (size_t)nsteps;
    gx_prog_t *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        return NULL;
    }
    p->steps        = calloc(n ? n : 1, sizeof(*p->steps));
    p->init_pending = calloc(n ? n : 1, sizeof(int32_t));
    p->dep_off      = calloc(n + 1, sizeof(int32_t));
    p->dep_list     = calloc(ndeps ? (size_t)ndeps : 1, sizeof(int32_t));
    p->next_same    = calloc(n ? n : 1, sizeof(int32_t));
    if (!p->steps || !p->init_pending || !p->dep_off || !p->dep_list || !p->next_same) {
        p->refs = 1;
        gx_prog_release(p);
        return NULL;
    }
    p->nsteps = nsteps;
    p->ndeps  = ndeps;
    p->refs   = 1;
    return p;
}

static void gx_call_free_mem(gx_call_t *c);

void gx_prog_release(gx_prog_t *p)
{
    if (p == NULL || --p->refs > 0) {
        return;
    }
    while (p->idle != NULL) {
        gx_call_t *c = p->idle;
        p->idle      = c->next;
        gx_call_free_mem(c);
    }
    free(p->steps);
    free(p->init_pending);
    free(p->dep_off);
    free(p->dep_list);
    free(p->next_same);
    free(p);
}

int gx_prog_set_reduce(gx_prog_t *p, int dtype, int op, size_t esize)
{
    p->kernel = gx_reduce_kernel(dtype, op);
    p->esize  = esize;
    return p->kernel ? 0 : -1;
}

/* ------------------------------------------------------------------- teams */

/* ucx.MakeTag's layout (ucx/tag.go): sender 20 bits, sequence 20, step 24. */
static const gx_tags_t gx_own_tags = {0, 0xfffffu, 44, 24};

static gx_team_t *gx_team_alloc(gr_worker_t *w, int32_t rank, int32_t size)
{
    gx_team_t *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        return NULL;
    }
    t->eps = calloc((size_t)size, sizeof(*t->eps));
    if (t->eps == NULL) {
        free(t);
        return NULL;
    }
    t->w     = w;
    t->rank  = rank;
    t->size  = size;
    t->refs  = 1;
    t->lockp = &t->lock;
    t->tags  = gx_own_tags;
    return t;
}

gx_team_t *gx_team_new(gr_worker_t *w, int32_t rank, int32_t size)
{
    return gx_team_alloc(w, rank, size);
}

void gx_team_set_ep(gx_team_t *t, int32_t peer, gr_ep_t *ep)
{
    if (peer >= 0 && peer < t->size) {
        t->eps[peer] = ep;
    }
}

/* ---------------------------------------------------------- shared workers */

gx_shared_t *gx_shared_new(gr_worker_t *w)
{
    gx_shared_t *s = calloc(1, sizeof(*s));
    if (s != NULL) {
        s->w    = w;
        s->refs = 1;
    }
    return s;
}

/* gx_shared_release drops a reference with the lock held: it releases
 * the lock, or frees the record with the last reference. */
static void gx_shared_release(gx_shared_t *s)
{
    if (--s->refs > 0) {
        gx_unlock(&s->lock);
        return;
    }
    gx_cache_clear(&s->cache);
    free(s->eps);
    free(s);
}

void gx_shared_free(gx_shared_t *s)
{
    if (s == NULL) {
        return;
    }
    gx_lock(&s->lock);
    gx_cache_clear(&s->cache);
    s->w = NULL; /* Go closes the worker next */
    gx_shared_release(s);
}

int gx_shared_set_ep(gx_shared_t *s, uint32_t r, gr_ep_t *ep)
{
    if (r >= (uint32_t)s->neps) {
        int32_t n = s->neps ? s->neps : 16;
        while ((uint32_t)n <= r) {
            n *= 2;
        }
        gr_ep_t **eps = realloc(s->eps, (size_t)n * sizeof(*eps));
        if (eps == NULL) {
            return -1;
        }
        memset(eps + s->neps, 0, (size_t)(n - s->neps) * sizeof(*eps));
        s->eps  = eps;
        s->neps = n;
    }
    s->eps[r] = ep;
    return 0;
}

/* A shared worker's tag: team id 16 bits, scope 4, scope id 4, sender
 * 12, sequence 12, step 16. The team's key names it among the context's
 * live teams (UCC gives a process's live teams distinct ids), and a team
 * of an id used before starts after every call of the one before ended
 * on every member. */
int gx_shared_tags(uint32_t key, int32_t size, gx_tags_t *tags)
{
    uint64_t id = key >> 16, scope = (key >> 8) & 0xff, sid = key & 0xff;
    if (scope >= 16 || sid >= 16 || size < 1 || size > GX_SHARED_MAX_SIZE) {
        return -1;
    }
    tags->base         = (id << 8 | scope << 4 | sid) << 40;
    tags->sender_shift = 28;
    tags->seq_shift    = 16;
    tags->seq_mask     = 0xfffu;
    return 0;
}

gx_team_t *gx_team_new_shared(gx_shared_t *s, int32_t rank, int32_t size, const uint32_t *ranks,
                              const gx_tags_t *tags)
{
    if (s->w == NULL) {
        return NULL;
    }
    for (int32_t r = 0; r < size; r++) {
        if (ranks[r] >= (uint32_t)s->neps || s->eps[ranks[r]] == NULL) {
            return NULL;
        }
    }
    gx_team_t *t = gx_team_alloc(s->w, rank, size);
    if (t == NULL) {
        return NULL;
    }
    for (int32_t r = 0; r < size; r++) {
        t->eps[r] = s->eps[ranks[r]];
    }
    t->lockp  = &s->lock;
    t->tags   = *tags;
    t->shared = s;
    s->refs++;
    return t;
}

/* ------------------------------------------------------------ the caches */

static uint64_t gx_key_hash(const gx_key_t *k)
{
    /* FNV-1a over the key's 64-bit words (a key is zero-filled, padding
     * included): a lookup per call, so words rather than bytes. */
    _Static_assert(sizeof(gx_key_t) % 8 == 0, "gx_key_t is whole words");
    uint64_t h = 1469598103934665603ull, w;
    for (size_t i = 0; i < sizeof(*k); i += 8) {
        memcpy(&w, (const char *)k + i, 8);
        h = (h ^ w) * 1099511628211ull;
    }
    return h ^ (h >> 29);
}

gx_prog_t *gx_cache_get(const gx_cache_t *c, const gx_key_t *key)
{
    size_t i = gx_key_hash(key) % GX_CACHE_SLOTS;
    for (int n = 0; n < GX_CACHE_SLOTS; n++, i = (i + 1) % GX_CACHE_SLOTS) {
        const gx_entry_t *e = &c->slot[i];
        if (e->prog == NULL) {
            return NULL;
        }
        if (memcmp(&e->key, key, sizeof(*key)) == 0) {
            return e->prog;
        }
    }
    return NULL;
}

void gx_cache_clear(gx_cache_t *c)
{
    for (int i = 0; i < GX_CACHE_SLOTS; i++) {
        if (c->slot[i].prog != NULL && c->slot[i].prog != GX_PROG_GO) {
            gx_prog_release(c->slot[i].prog);
        }
        c->slot[i].prog = NULL;
    }
    c->cached = 0;
}

int gx_cache_put(gx_cache_t *c, const gx_key_t *key, gx_prog_t *p)
{
    if (gx_cache_get(c, key) != NULL) {
        return -1;
    }
    /* Bounded like the Go plan cache: when three quarters full, start over
     * (programs in use live on through their calls' references). */
    if (c->cached >= GX_CACHE_SLOTS * 3 / 4) {
        gx_cache_clear(c);
    }
    size_t i = gx_key_hash(key) % GX_CACHE_SLOTS;
    while (c->slot[i].prog != NULL) {
        i = (i + 1) % GX_CACHE_SLOTS;
    }
    c->slot[i].key  = *key;
    c->slot[i].prog = p;
    if (p != GX_PROG_GO) {
        p->refs++;
    }
    c->cached++;
    return 0;
}

int gx_team_put(gx_team_t *t, const gx_key_t *key, gx_prog_t *p) { return gx_cache_put(&t->cache, key, p); }

gx_prog_t *gx_team_get(gx_team_t *t, const gx_key_t *key) { return gx_cache_get(&t->cache, key); }

static void gx_live_remove(gx_call_t *c)
{
    gx_team_t *t = c->team;
    if (c->prev != NULL) {
        c->prev->next = c->next;
    } else if (t->live == c) {
        t->live = c->next;
    }
    if (c->next != NULL) {
        c->next->prev = c->prev;
    }
    c->next = c->prev = NULL;
}

static void gx_shared_release(gx_shared_t *s);

static void gx_team_release(gx_team_t *t)
{
    if (--t->refs > 0) {
        gx_team_unlock(t);
        return;
    }
    gx_shared_t *s = t->shared; /* its lock is the one held */
    free(t->eps);
    free(t);
    if (s != NULL) {
        gx_shared_release(s);
    }
}

void gx_team_free(gx_team_t *t)
{
    while (t->live != NULL) {
        gx_call_fail(t->live); /* takes it off the list */
    }
    gx_cache_clear(&t->cache);
    t->w = NULL; /* the worker goes next: no call may post or progress */
    gx_team_release(t);
}

/* ------------------------------------------------------------------- calls */

static size_t gx_align64(size_t n) { return (n + 63) & ~(size_t)63; }

static void gx_call_free_mem(gx_call_t *c)
{
    free(c->scratch);
    free(c->own);
    free(c->pending);
    free(c->ops);
    free(c);
}

gx_call_t *gx_call_new(gx_team_t *t, gx_prog_t *p)
{
    gx_call_t *c = p->idle;
    if (c != NULL) {
        p->idle = c->next;
        c->next = NULL;
    } else {
        size_t n = (size_t)p->nsteps;
        c        = calloc(1, sizeof(*c));
        if (c == NULL) {
            return NULL;
        }
        /* One block for the per-step integers: pending, ready_r, ready_s,
         * work, done (n each), then the states. */
        c->pending = malloc(5 * n * sizeof(int32_t) + n + 1);
        c->ops     = calloc(n ? n : 1, sizeof(*c->ops));
        if (p->size_scratch > 0) {
            c->scratch = aligned_alloc(64, gx_align64((size_t)p->size_scratch));
        }
        if (gx_layout_copies_input(p->layout) && p->size_src > 0) {
            c->own = aligned_alloc(64, gx_align64((size_t)p->size_src));
        }
        if (c->pending == NULL || c->ops == NULL || (p->size_scratch > 0 && c->scratch == NULL) ||
            (gx_layout_copies_input(p->layout) && p->size_src > 0 && c->own == NULL)) {
            gx_call_free_mem(c);
            return NULL;
        }
        c->ready_r = c->pending + n;
        c->ready_s = c->ready_r + n;
        c->work    = c->ready_s + n;
        c->done    = c->work + n;
        c->state   = (uint8_t *)(c->done + n);
        for (size_t i = 0; i < n; i++) {
            c->ops[i].call = c;
            c->ops[i].step = (int32_t)i;
        }
    }
    c->prog   = p;
    c->team   = t;
    c->status = GX_DONE; /* not running: a post starts it */
    p->refs++;
    t->refs++;
    return c;
}

/* gx_fail records the first error of the call. */
static void gx_fail(gx_call_t *c, int ucs, int32_t step, int64_t len)
{
    if (c->err_ucs == 0 && c->err_len < 0) {
        c->err_ucs  = ucs;
        c->err_step = step;
        c->err_len  = len;
    }
}

/* The completion of a send or receive: recorded for the next advance, since
 * UCX calls this from inside its progress (or, for a receive, possibly from
 * inside the post). */
static void gx_op_done(gr_cop_t *cop, int status, uint64_t length)
{
    gx_op_t   *op = (gx_op_t *)cop;
    gx_call_t *c  = op->call;
    op->req       = NULL;
    c->due--;
    if (c->orphan) {
        /* Finalized while UCX held this request (gx_call_finalize): the
         * last one to come back frees the call and lets go of its
         * program, which the call held until now. */
        if (c->due == 0) {
            gx_prog_t *p = c->prog;
            gx_call_free_mem(c);
            gx_prog_release(p);
        }
        return;
    }
    gx_step_t *s = &c->prog->steps[op->step];
    if (status != GX_UCS_OK) {
        gx_fail(c, status, op->step, -1);
    } else if (s->op == GX_RECV && (int64_t)length != s->len) {
        gx_fail(c, 0, op->step, (int64_t)length);
    }
    c->done[c->ndone++] = op->step;
}

/* enqueue makes a step whose counter reached zero ready (exec.Machine's
 * enqueue): sends and receives join the batch and release the next step of
 * their chain, local steps join the work list. */
static void gx_enqueue(gx_call_t *c, int32_t id)
{
    gx_prog_t *p = c->prog;
    while (id >= 0) {
        gx_step_t *s = &p->steps[id];
        c->state[id] = ST_READY;
        if (s->op == GX_SEND) {
            c->ready_s[c->nready_s++] = id;
        } else if (s->op == GX_RECV) {
            c->ready_r[c->nready_r++] = id;
        } else {
            c->work[c->nwork++] = id;
            return;
        }
        c->state[id] = ST_INFLIGHT;
        int32_t next = p->next_same[id];
        if (next < 0 || --c->pending[next] != 0) {
            return;
        }
        id = next;
    }
}

static void gx_complete(gx_call_t *c, int32_t id)
{
    gx_prog_t *p = c->prog;
    c->state[id] = ST_DONE;
    c->remaining--;
    for (int32_t i = p->dep_off[id]; i < p->dep_off[id + 1]; i++) {
        int32_t d = p->dep_list[i];
        if (--c->pending[d] == 0) {
            gx_enqueue(c, d);
        }
    }
}

static void gx_post(gx_call_t *c, int32_t id)
{
    gx_team_t *t  = c->team;
    gx_step_t *s  = &c->prog->steps[id];
    gx_op_t   *op = &c->ops[id];
    int        st;
    op->cop.done = gx_op_done;
    op->req      = NULL;
    c->due++;
    if (s->op == GX_SEND) {
        gr_ep_t *ep = t->eps[s->peer];
        if (ep == NULL) {
            c->due--;
            gx_fail(c, GX_UCS_NO_ELEM, id, -1);
            return;
        }
        st = gr_tag_send_c(ep, c->buf[s->src_buf] + s->src_off, (size_t)s->len,
                           gx_tag(t, t->rank, c->seq, s->tag), &op->cop, &op->req);
    } else {
        st = gr_tag_recv_c(t->w, c->buf[s->dst_buf] + s->dst_off, (size_t)s->len,
                           gx_tag(t, s->peer, c->seq, s->tag), &op->cop, &op->req);
    }
    if (st == GX_UCS_INPROGRESS) {
        return;
    }
    /* Finished at once: no callback will come. */
    gx_op_done(&op->cop, st, s->op == GX_RECV ? (uint64_t)s->len : 0);
}

static void gx_run_local(gx_call_t *c, int32_t id)
{
    gx_prog_t *p   = c->prog;
    gx_step_t *s   = &p->steps[id];
    char      *dst = c->buf[s->dst_buf] + s->dst_off;
    char      *src = c->buf[s->src_buf] + s->src_off;
    if (s->op == GX_COPY) {
        memmove(dst, src, (size_t)s->len);
    } else if (s->len > 0) {
        p->kernel(dst, src, (size_t)s->len / p->esize);
    }
    gx_complete(c, id);
}

/* advance feeds the recorded completions, posts what became ready
 * (receives first) and runs local steps, until nothing changes. */
static void gx_advance(gx_call_t *c)
{
    for (;;) {
        if (c->err_ucs != 0 || c->err_len >= 0) {
            return;
        }
        int moved = 0;
        while (c->ndone > 0) {
            gx_complete(c, c->done[--c->ndone]);
            moved = 1;
        }
        if (c->nready_r > 0 || c->nready_s > 0) {
            /* Take the batch before posting: a post may complete at once
             * and release more steps into fresh batches. */
            int32_t nr = c->nready_r, ns = c->nready_s;
            c->nready_r = c->nready_s = 0;
            for (int32_t i = 0; i < nr; i++) {
                gx_post(c, c->ready_r[i]);
            }
            for (int32_t i = 0; i < ns; i++) {
                gx_post(c, c->ready_s[i]);
            }
            moved = 1;
        }
        while (c->nwork > 0 && c->nready_r == 0 && c->nready_s == 0) {
            gx_run_local(c, c->work[--c->nwork]);
            moved = 1;
        }
        if (!moved) {
            return;
        }
    }
}

/* settle moves a call off the team's live list once it ended. */
static int gx_settle(gx_call_t *c)
{
    if (c->err_ucs != 0 || c->err_len >= 0) {
        if (c->status == GX_RUNNING) {
            gx_call_fail(c);
        }
        return c->status;
    }
    if (c->remaining == 0 && c->due == 0) {
        c->status = GX_DONE;
        gx_live_remove(c);
    }
    return c->status;
}

int gx_call_post(gx_call_t *c, const void *src, void *dst)
{
    gx_prog_t *p = c->prog;
    gx_team_t *t = c->team;
    if (c->status == GX_RUNNING) {
        return GX_FAILED;
    }
    if (t->w == NULL || c->due > 0) {
        /* The team is gone; or a failed call whose previous post UCX
         * still holds a request of (a send it did not cancel): that
         * request's completion would land on the op records a new post
         * reuses and count as the new call's. */
        c->err_ucs  = t->w == NULL ? GX_UCS_CANCELED : GX_UCS_BUSY;
        c->err_len  = -1;
        c->err_step = -1;
        c->status   = GX_FAILED;
        return GX_FAILED;
    }
    char *s, *d;
    gx_layout_place(p->layout, p->dst_shift, t->rank, p->size_src, p->size_dst, c->own, src, dst, &s, &d);
    c->buf[GX_BUF_SRC]     = s;
    c->buf[GX_BUF_DST]     = d;
    c->buf[GX_BUF_SCRATCH] = c->scratch;

    t->seq      = (t->seq + 1) & t->tags.seq_mask;
    c->seq      = t->seq;
    c->rank     = t->rank;
    c->status   = GX_RUNNING;
    c->err_ucs  = 0;
    c->err_len  = -1;
    c->err_step = -1;
    c->remaining = p->nsteps;
    c->due = c->ndone = c->nready_r = c->nready_s = c->nwork = 0;
    c->watch_us = gx_now_us();
    c->tests    = 0;
    memcpy(c->pending, p->init_pending, (size_t)p->nsteps * sizeof(int32_t));
    memset(c->state, 0, (size_t)p->nsteps);
    c->prev = NULL;
    c->next = t->live;
    if (t->live != NULL) {
        t->live->prev = c;
    }
    t->live = c;
    for (int32_t id = 0; id < p->nsteps; id++) {
        if (c->pending[id] == 0 && c->state[id] == ST_WAITING) {
            gx_enqueue(c, id);
        }
    }
    gx_advance(c);
    gr_progress_c(t->w);
    gx_advance(c);
    gx_settle(c);
    return c->status == GX_FAILED ? GX_FAILED : GX_DONE;
}

int gx_call_test(gx_call_t *c)
{
    if (c->status != GX_RUNNING) {
        return c->status;
    }
    gr_progress_c(c->team->w);
    gx_advance(c);
    int st = gx_settle(c);
    if (st != GX_RUNNING) {
        return st;
    }
    if (++c->tests % 64 != 0) {
        return GX_RUNNING; /* the clock only every 64th test: a read costs as much as a poll */
    }
    int64_t now = gx_now_us();
    if (now - c->watch_us >= GX_WATCH_US) {
        c->watch_us = now;
        return GX_WATCH;
    }
    return GX_RUNNING;
}

int gx_team_progress_live(gx_team_t *t)
{
    if (t->w == NULL || t->live == NULL) {
        return t->live != NULL;
    }
    gr_progress_c(t->w);
    for (gx_call_t *c = t->live; c != NULL;) {
        gx_call_t *next = c->next; /* settle may take c off the list */
        if (c->status == GX_RUNNING) {
            gx_advance(c);
            gx_settle(c);
        }
        c = next;
    }
    return t->live != NULL;
}

void gx_call_fail(gx_call_t *c)
{
    gx_team_t *t = c->team;
    if (c->status != GX_RUNNING) {
        return;
    }
    if (c->err_ucs == 0 && c->err_len < 0) {
        c->err_ucs = GX_UCS_CANCELED;
    }
    /* Cancel what UCX still holds and wait until it let go of the buffers
     * (bounded: a request UCX never completes is left to it). */
    for (int32_t id = 0; id < c->prog->nsteps; id++) {
        if (c->ops[id].req != NULL) {
            gr_request_cancel(t->w, c->ops[id].req);
        }
    }
    int64_t until = gx_now_us() + GX_CANCEL_US;
    while (c->due > 0 && gx_now_us() < until) {
        gr_progress_c(t->w);
    }
    c->status = GX_FAILED;
    t->cut    = 1;
    gx_live_remove(c);
}

void gx_call_finalize(gx_call_t *c)
{
    gx_prog_t *p = c->prog;
    gx_team_t *t = c->team;
    gx_call_fail(c);
    if (c->due == 0) {
        c->next = p->idle;
        p->idle = c;
        gx_prog_release(p);
    } else {
        /* UCX still holds a request of this call (one it did not cancel,
         * such as a rendezvous send): its completion comes later, reads
         * the call and its program's step, and must find both. The call
         * keeps its reference on the program; gx_op_done frees the two
         * when the last request comes back. */
        c->orphan = 1;
    }
    gx_team_release(t); /* unlocks, or frees a team Go let go of */
}

void gx_call_error(gx_call_t *c, char *buf, size_t len)
{
    gx_step_t *s = c->err_step >= 0 ? &c->prog->steps[c->err_step] : NULL;
    if (s == NULL && c->err_ucs == GX_UCS_BUSY) {
        snprintf(buf, len, "%s: posted again while UCX still holds a request of its last post: %s",
                 c->prog->alg, gr_status_string(c->err_ucs));
    } else if (s == NULL) {
        snprintf(buf, len, "%s: the call was cancelled", c->prog->alg);
    } else if (c->err_len >= 0) {
        snprintf(buf, len, "%s: rank %d step %d received %lld bytes from rank %d, posted %lld",
                 c->prog->alg, c->rank, c->err_step, (long long)c->err_len, s->peer,
                 (long long)s->len);
    } else {
        snprintf(buf, len, "%s: rank %d step %d (%s rank %d): %s", c->prog->alg, c->rank,
                 c->err_step, s->op == GX_SEND ? "send to" : "receive from", s->peer,
                 gr_status_string(c->err_ucs));
    }
}
