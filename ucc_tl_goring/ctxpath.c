//go:build ucc

/*
 * ctxpath.c: the context path of goring.h (docs/ucc.md "The context
 * path"). A context opened with the C path on has one more UCX worker,
 * shared by its lazy teams (cexec's gx_shared_t: endpoints by context
 * rank, the programs by member list, rank and shape). A team on it is a
 * goring_cteam: made in C at team creation, it gets its executor team on
 * its first call, with tags that name it by UCC's key. A shape the
 * context has not seen on these members is planned once in Go
 * (goring_go_cteam_lower), which connects the members' endpoints too;
 * every later team of the same members runs it without entering Go.
 */
#include <stdlib.h>
#include <string.h>

#define GORING_TYPES_ONLY
#include "goring.h"
#include "_cgo_export.h"
#include "cpath.h"

struct goring_cteam {
    gx_shared_t     *s;
    gx_team_t       *gx; /* NULL until the first call */
    gx_tags_t        tags;
    uint32_t         rank, size;
    const uint32_t  *ranks; /* the caller's, until destroy */
    uint64_t         members;
    void           **cards;
    size_t          *bounds;
};

/* The shared workers, by context handle: written by Go at context
 * creation and destruction, read here. */
#define TLG_CONTEXTS 16
static struct {
    uint64_t     ctx;
    gx_shared_t *s;
} tlg_shared[TLG_CONTEXTS];
static int32_t tlg_shared_lock;

int tlg_shared_register(uint64_t ctx, void *s)
{
    int rc = -1;
    gx_lock(&tlg_shared_lock);
    for (int i = 0; i < TLG_CONTEXTS; i++) {
        if (tlg_shared[i].s == NULL) {
            tlg_shared[i].ctx = ctx;
            tlg_shared[i].s   = s;
            rc                = 0;
            break;
        }
    }
    gx_unlock(&tlg_shared_lock);
    return rc; /* full: this context's teams run in their own workers */
}

void tlg_shared_unregister(uint64_t ctx)
{
    gx_lock(&tlg_shared_lock);
    for (int i = 0; i < TLG_CONTEXTS; i++) {
        if (tlg_shared[i].s != NULL && tlg_shared[i].ctx == ctx) {
            tlg_shared[i].s   = NULL;
            tlg_shared[i].ctx = 0;
        }
    }
    gx_unlock(&tlg_shared_lock);
}

static gx_shared_t *tlg_shared_of(uint64_t ctx)
{
    gx_shared_t *s = NULL;
    gx_lock(&tlg_shared_lock);
    for (int i = 0; i < TLG_CONTEXTS; i++) {
        if (tlg_shared[i].s != NULL && tlg_shared[i].ctx == ctx) {
            s = tlg_shared[i].s;
        }
    }
    gx_unlock(&tlg_shared_lock);
    return s;
}

goring_status_t goring_cteam_create(goring_context_h ctx, uint32_t rank, uint32_t size, uint32_t key,
                                    const uint32_t *ranks, uint64_t members, void **cards,
                                    size_t *bounds, goring_cteam_h *out)
{
    gx_shared_t *s = tlg_shared_of(ctx);
    gx_tags_t    tags;
    if (out == NULL || ranks == NULL || cards == NULL || bounds == NULL || rank >= size) {
        return GORING_ERR_INVALID;
    }
    if (s == NULL || members == 0 || gx_shared_tags(key, (int32_t)size, &tags) != 0) {
        return GORING_ERR_NOT_SUPPORTED;
    }
    struct goring_cteam *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        return GORING_ERR_NO_MEMORY;
    }
    t->s       = s;
    t->tags    = tags;
    t->rank    = rank;
    t->size    = size;
    t->ranks   = ranks;
    t->members = members;
    t->cards   = cards;
    t->bounds  = bounds;
    *out       = t;
    return GORING_OK;
}

void goring_cteam_destroy(goring_cteam_h t)
{
    if (t == NULL) {
        return;
    }
    if (t->gx != NULL) {
        gx_team_lock(t->gx);
        gx_team_free(t->gx); /* cancels live calls; unlocks */
    }
    free(t);
}

/* The failure detector of a call whose team has no Go side: the
 * members' processes, from their context cards. */
static goring_status_t tlg_cteam_check(void *arg)
{
    goring_cteam_h t = arg;
    return goring_go_cards_check(t->rank, t->size, t->cards, t->bounds);
}

goring_status_t goring_cteam_coll_init(goring_cteam_h t, goring_team_h go, const goring_coll_args_t *args,
                                       goring_coll_h *out)
{
    gx_key_t k;
    if (t == NULL || args == NULL || out == NULL) {
        return GORING_ERR_INVALID;
    }
    if (tlg_cpath_key(args, &k) != 0 || args->coll == GORING_COLL_ALLTOALL || args->count == 0) {
        return GORING_IN_TEAM;
    }
    k.members = t->members;
    k.rank    = t->rank;
    k.size    = t->size;
    gx_shared_t *s = t->s;
    for (int planned = 0;; planned = 1) {
        /* The program, the team and the call under one hold of the lock:
         * another thread's put may clear the cache and free a program
         * that no call holds yet. */
        gx_lock(&s->lock);
        gx_prog_t *p = gx_cache_get(&s->cache, &k);
        if (p == GX_PROG_GO || (p != NULL && !tlg_buffers_ok(args))) {
            gx_unlock(&s->lock);
            return GORING_IN_TEAM; /* the team runs it (and says what is wrong with the buffers) */
        }
        if (p != NULL && t->gx == NULL) {
            t->gx = gx_team_new_shared(s, (int32_t)t->rank, (int32_t)t->size, t->ranks, &t->tags);
        }
        if (p != NULL && t->gx != NULL) {
            gx_call_t *c = gx_call_new(t->gx, p);
            gx_unlock(&s->lock);
            if (c == NULL) {
                return GORING_ERR_NO_MEMORY;
            }
            *out = tlg_call_start(c, go, tlg_cteam_check, t, args);
            return GORING_OK;
        }
        gx_unlock(&s->lock);
        /* Not planned for these members yet, or a member without an
         * endpoint: Go plans the shape and connects the members. */
        if (go == 0) {
            return GORING_NEED_TEAM;
        }
        if (planned) {
            return goring_go_set_error("context path: a member has no endpoint after connecting",
                                       GORING_ERR_NO_RESOURCE);
        }
        void           *lowered = NULL;
        goring_status_t st      = goring_go_cteam_lower(go, (goring_coll_args_t *)args, (uint32_t *)t->ranks,
                                                        &lowered);
        if (st != GORING_OK) {
            return st;
        }
        gx_lock(&s->lock);
        if (gx_cache_get(&s->cache, &k) == NULL) {
            gx_cache_put(&s->cache, &k, lowered != NULL ? (gx_prog_t *)lowered : GX_PROG_GO);
        }
        if (lowered != NULL) {
            gx_prog_release(lowered); /* Go's reference: the cache holds its own */
        }
        gx_unlock(&s->lock);
    }
}
