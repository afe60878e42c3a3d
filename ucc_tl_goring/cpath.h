/*
 * cpath.h: what the two C paths of goring.h share (cpath.c: a team's own
 * worker; ctxpath.c: the context's shared worker). Both run a call in
 * cexec's executor under one kind of handle, so goring_coll_post, test,
 * finalize and algorithm (cpath.c) serve both.
 */
#ifndef GORING_CPATH_H
#define GORING_CPATH_H

#include "cexec.h"

/* One collective through a C path: the executor's call, or the Go call
 * it became when posted while Go was busy (a team's own worker only). */
typedef struct {
    gx_call_t         *c;
    goring_coll_h      go;
    goring_team_h      team; /* the team in Go; 0: none made (context path) */
    /* The failure detector where the team has no Go side (the context
     * path's, with its argument). */
    goring_status_t  (*check)(void *arg);
    void              *check_arg;
    /* The call's arguments, for its post: goring_coll_args_t's but
     * alltoallv's arrays (no C-path call has them), the algorithm's name
     * copied (NULL: none), as goring_coll_init reads its arguments at
     * init only: a post that hands the call to Go makes it there from
     * these, and the caller's name may be gone by then. */
    goring_coll_type_t coll;
    goring_dtype_t     dtype;
    goring_op_t        op;
    uint32_t           root;
    int                in_place;
    goring_mem_type_t  mem;
    const void        *src;
    void              *dst;
    uint64_t           count;
    const char        *alg; /* NULL or alg_name */
    char               alg_name[32];
} tlg_call_t;
_Static_assert(sizeof(tlg_call_t) <= sizeof(((gx_call_t *)0)->user), "tlg_call_t fits gx_call_t.user");

/* The call's key (cexec.Key): 0, or -1 when no C path serves the call. */
int tlg_cpath_key(const goring_coll_args_t *a, gx_key_t *k);
/* Whether the call has its buffers (else Go reports the error). */
int tlg_buffers_ok(const goring_coll_args_t *a);
/* Records the new call c in its user area and returns its handle; check
 * (with check_arg) is asked whether a peer failed where team is 0. */
goring_coll_h tlg_call_start(gx_call_t *c, goring_team_h team, goring_status_t (*check)(void *),
                             void *check_arg, const goring_coll_args_t *args);

#endif
