//go:build ucc

/*
 * cpath.c: the collective entry points of goring.h. A call whose shape the
 * team has lowered into C (cpath.go) runs in package cexec's executor and
 * never enters Go; every other call, and every call posted while Go has
 * one on the wire or queued, goes to the Go side (goring_go_coll_*).
 *
 * A C call's handle is its record's address with the top bit set: Go's
 * handles are small counters (handles.go), user-space addresses stay
 * below 2^63, so the two never meet.
 */
#include <string.h>

/* Types only: _cgo_export.h declares the Go side's functions without
 * const, which goring.h's prototypes of the same functions carry. */
#define GORING_TYPES_ONLY
#include "goring.h"
#include "_cgo_export.h"
#include "cpath.h"

#define TLG_CPATH_BIT ((uint64_t)1 << 63)

/* Teams with a C side, by Go handle: a small open table, written by Go at
 * connect and destroy (on the thread that drives the team), read here. */
#define TLG_TEAMS 256
static struct {
    uint64_t   handle;
    gx_team_t *team;
} tlg_teams[TLG_TEAMS];

int tlg_cpath_register(uint64_t handle, void *team)
{
    for (int i = 0; i < TLG_TEAMS; i++) {
        size_t k = (handle + (uint64_t)i) % TLG_TEAMS;
        if (tlg_teams[k].team == NULL) {
            tlg_teams[k].handle = handle;
            tlg_teams[k].team   = team;
            return 0;
        }
    }
    return -1; /* full: this team runs every call in Go */
}

void tlg_cpath_unregister(uint64_t handle)
{
    for (int i = 0; i < TLG_TEAMS; i++) {
        size_t k = (handle + (uint64_t)i) % TLG_TEAMS;
        if (tlg_teams[k].team != NULL && tlg_teams[k].handle == handle) {
            tlg_teams[k].team   = NULL;
            tlg_teams[k].handle = 0;
            return;
        }
    }
}

static gx_team_t *tlg_team(uint64_t handle)
{
    for (int i = 0; i < TLG_TEAMS; i++) {
        size_t k = (handle + (uint64_t)i) % TLG_TEAMS;
        if (tlg_teams[k].team != NULL && tlg_teams[k].handle == handle) {
            return tlg_teams[k].team;
        }
    }
    return NULL;
}

/* The key of a call (cexec.Key, built the same way by cpath.go's
 * cpathKey): op only for reductions, root only for bcast; -1 when the call
 * is not one the C path serves. */
int tlg_cpath_key(const goring_coll_args_t *a, gx_key_t *k)
{
    memset(k, 0, sizeof(*k));
    if (a->mem != GORING_MEM_HOST || a->coll < GORING_COLL_ALLGATHER ||
        a->coll > GORING_COLL_ALLTOALL || (a->coll == GORING_COLL_ALLTOALL && a->in_place)) {
        return -1; /* alltoallv's counts vary by call: Go plans each */
    }
    if (a->alg != NULL) {
        size_t n = strlen(a->alg);
        if (n >= sizeof(k->alg)) {
            return -1;
        }
        memcpy(k->alg, a->alg, n);
    }
    k->count    = a->count;
    k->coll     = (uint8_t)a->coll;
    k->dtype    = (uint8_t)a->dtype;
    k->in_place = a->in_place != 0;
    if (a->coll == GORING_COLL_ALLREDUCE || a->coll == GORING_COLL_REDUCE_SCATTER) {
        k->op = (uint8_t)a->op;
    }
    if (a->coll == GORING_COLL_BCAST) {
        k->root = a->root;
    }
    return 0;
}

/* The record lives in its executor call's user area: the handle is the
 * call's address. */
static tlg_call_t *tlg_call(goring_coll_h h)
{
    if (!(h & TLG_CPATH_BIT)) {
        return NULL;
    }
    return (tlg_call_t *)((gx_call_t *)(uintptr_t)(h & ~TLG_CPATH_BIT))->user;
}

goring_coll_h tlg_call_start(gx_call_t *c, goring_team_h team, goring_status_t (*check)(void *),
                             void *check_arg, const goring_coll_args_t *args)
{
    tlg_call_t *fc = (tlg_call_t *)c->user;
    fc->c         = c;
    fc->go        = 0;
    fc->team      = team;
    fc->check     = check;
    fc->check_arg = check_arg;
    fc->coll      = args->coll;
    fc->dtype     = args->dtype;
    fc->op        = args->op;
    fc->root      = args->root;
    fc->in_place  = args->in_place;
    fc->mem       = args->mem;
    fc->src       = args->src;
    fc->dst       = args->dst;
    fc->count     = args->count;
    fc->alg       = NULL;
    if (args->alg != NULL) { /* shorter than alg_name: tlg_cpath_key keyed the call */
        strncpy(fc->alg_name, args->alg, sizeof(fc->alg_name) - 1);
        fc->alg_name[sizeof(fc->alg_name) - 1] = '\0';
        fc->alg = fc->alg_name;
    }
    return TLG_CPATH_BIT | (uint64_t)(uintptr_t)c;
}

/* tlg_call_args are the call's arguments as goring_coll_init took them. */
static goring_coll_args_t tlg_call_args(const tlg_call_t *fc)
{
    goring_coll_args_t a = {.coll = fc->coll, .src = fc->src, .dst = fc->dst, .count = fc->count,
                            .dtype = fc->dtype, .op = fc->op, .root = fc->root,
                            .in_place = fc->in_place, .mem = fc->mem, .alg = fc->alg};
    return a;
}

/* Buffers the Go side would refuse (missing) go there for the error it
 * reports. Misaligned buffers of a reduction stay: the C kernels load and
 * store elements with memcpy (cexec/reduce.c), and a verdict that depends
 * on this rank's addresses would send its call alone to the team's worker
 * while its peers' run on the context path's, which never meet (Go, too,
 * runs such a call, in aligned copies: team/aligned.go). */
int tlg_buffers_ok(const goring_coll_args_t *a)
{
    return gx_layout_pointers_ok(a->coll == GORING_COLL_BCAST, a->in_place, a->src, a->dst);
}

goring_status_t goring_coll_init(goring_team_h team, const goring_coll_args_t *args,
                                 goring_coll_h *out)
{
    gx_team_t *t = tlg_team(team);
    gx_key_t   k;
    if (t != NULL && args != NULL && out != NULL && tlg_cpath_key(args, &k) == 0) {
        gx_call_t *c = NULL;
        gx_team_lock(t);
        gx_prog_t *p = gx_team_get(t, &k);
        if (p != NULL && tlg_buffers_ok(args)) {
            c = gx_call_new(t, p);
        }
        gx_team_unlock(t);
        if (c != NULL) {
            *out = tlg_call_start(c, team, NULL, NULL, args);
            return GORING_OK;
        }
    }
    return goring_go_coll_init(team, (goring_coll_args_t *)args, out);
}

/* tlg_failed hands a failed C call's reason to Go's last-error slot. */
static goring_status_t tlg_failed(tlg_call_t *fc)
{
    char text[256];
    gx_call_error(fc->c, text, sizeof(text));
    return goring_go_set_error(text, GORING_ERR_NO_RESOURCE);
}

goring_status_t goring_coll_post(goring_coll_h h)
{
    tlg_call_t *fc = tlg_call(h);
    if (fc == NULL) {
        return goring_go_coll_post(h);
    }
    if (fc->go == 0) {
        gx_team_t *t = fc->c->team;
        gx_team_lock(t);
        if (!t->go_busy) {
            int st = gx_call_post(fc->c, fc->src, fc->dst);
            gx_team_unlock(t);
            return st == GX_DONE ? GORING_OK : tlg_failed(fc);
        }
        gx_team_unlock(t);
        /* Go's calls take their sequence numbers when they start, so a C
         * call must not start ahead of one queued there: this one joins
         * the queue (for good: a repost stays in Go). */
        goring_coll_args_t a  = tlg_call_args(fc);
        goring_status_t    st = goring_go_coll_init(fc->team, &a, &fc->go);
        if (st != GORING_OK) {
            fc->go = 0;
            return st;
        }
    }
    return goring_go_coll_post(fc->go);
}

goring_status_t goring_coll_post_stream(goring_coll_h h, void *stream)
{
    tlg_call_t *fc = tlg_call(h);
    if (fc == NULL) {
        return goring_go_coll_post_stream(h, stream);
    }
    /* The C paths run small host calls only: none is a node call. */
    return goring_go_set_error("goring_coll_post_stream: a host call of the C path",
                               GORING_ERR_NOT_SUPPORTED);
}

goring_status_t goring_coll_prepare_stream(goring_coll_h h)
{
    tlg_call_t *fc = tlg_call(h);
    if (fc == NULL) {
        return goring_go_coll_prepare_stream(h);
    }
    return goring_go_set_error("goring_coll_prepare_stream: a host call of the C path",
                               GORING_ERR_NOT_SUPPORTED);
}

goring_status_t goring_coll_test(goring_coll_h h)
{
    tlg_call_t *fc = tlg_call(h);
    if (fc == NULL) {
        return goring_go_coll_test(h);
    }
    if (fc->go != 0) {
        return goring_go_coll_test(fc->go);
    }
    gx_team_t *t = fc->c->team;
    gx_team_lock(t);
    int st = gx_call_test(fc->c);
    gx_team_unlock(t);
    switch (st) {
    case GX_DONE:
        return GORING_OK;
    case GX_RUNNING:
        return GORING_INPROGRESS;
    case GX_WATCH: {
        /* Half a second without finishing: the Go side checks the peers
         * (their processes, UCX's endpoint errors). A late peer is waited
         * for; a dead one fails the call. */
        goring_status_t verdict = fc->team != 0 ? goring_go_team_check(fc->team) : fc->check(fc->check_arg);
        if (verdict == GORING_OK) {
            return GORING_INPROGRESS;
        }
        gx_team_lock(t);
        gx_call_fail(fc->c);
        gx_team_unlock(t);
        return verdict;
    }
    }
    return tlg_failed(fc);
}

goring_status_t goring_coll_finalize(goring_coll_h h)
{
    tlg_call_t *fc = tlg_call(h);
    if (fc == NULL) {
        return goring_go_coll_finalize(h);
    }
    goring_status_t st = GORING_OK;
    if (fc->go != 0) {
        st = goring_go_coll_finalize(fc->go);
    }
    gx_team_lock(fc->c->team);
    gx_call_finalize(fc->c); /* the record goes with the call; unlocks */
    return st;
}

const char *goring_coll_algorithm(goring_coll_h h)
{
    tlg_call_t *fc = tlg_call(h);
    if (fc == NULL) {
        return goring_go_coll_algorithm(h);
    }
    if (fc->go != 0) {
        return goring_go_coll_algorithm(fc->go);
    }
    return fc->c->prog->alg;
}
