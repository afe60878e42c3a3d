/*
 * cexec.h: the C executor of small host collectives (package cexec).
 *
 * A gx_prog_t is one rank's program of one call shape, lowered by Go from
 * a sched.RankProgram (lower.go) into flat arrays with exec.BuildGraph's
 * rules. A gx_team_t holds a team's UCX worker and endpoints (package
 * ucx's C records), the sequence number its calls draw from, and a cache of
 * programs by call shape. A gx_call_t is one call of a program: it posts
 * UCX tag operations with C callbacks (ucx/shim.h, gr_*_c), copies and
 * reduces with C kernels, and never enters Go.
 *
 * Everything here runs on the caller's thread. Several threads may drive
 * one team at once (UCC's progress in a multi-threaded MPI tests any task
 * from any thread), so whoever touches a team's worker, cache or calls
 * holds its lock: C callers through gx_team_lock, Go through the same word
 * (cexec.Team.Lock); never across a call into the other language.
 */
#ifndef GORING_CEXEC_H
#define GORING_CEXEC_H

#include <stddef.h>
#include <stdint.h>

#include "layout.h"
#include "reduce.h"
#include "shim.h"

/* Step operations and buffers: sched.StepOp and sched.Buf values. */
enum { GX_SEND = 1, GX_RECV = 2, GX_COPY = 3, GX_REDUCE = 4 };
enum { GX_BUF_SRC = 1, GX_BUF_DST = 2, GX_BUF_SCRATCH = 3 };

/* Call states, as gx_call_test returns them. */
enum {
    GX_DONE    = 0,
    GX_RUNNING = 1,
    GX_WATCH   = 2, /* running, and due for a check of its peers (the caller's) */
    GX_FAILED  = -1
};

typedef struct {
    int64_t  src_off, dst_off, len;
    int32_t  peer;
    uint32_t tag;
    uint8_t  op, src_buf, dst_buf;
} gx_step_t;

struct gx_call;

typedef struct gx_prog {
    int32_t        nsteps, nsends, nrecvs, ndeps;
    gx_step_t     *steps;
    int32_t       *init_pending; /* nsteps */
    int32_t       *dep_off;      /* nsteps + 1 */
    int32_t       *dep_list;     /* ndeps */
    int32_t       *next_same;    /* nsteps */
    int64_t        size_src, size_dst, size_scratch;
    int32_t        layout, dst_shift;
    size_t         esize;  /* element size of reduce steps */
    gx_reduce_fn   kernel; /* NULL when no step reduces */
    int32_t        refs;   /* the cache's, and each call's */
    struct gx_call *idle;  /* finished calls, kept with their memory */
    char           alg[32];
} gx_prog_t;

/* A call shape: what the team layer's arguments say, in its own numbers.
 * A shared worker's cache (gx_shared_t) keys programs by team as well:
 * the member list's key, the rank and the size; a team's own cache leaves
 * them zero. */
typedef struct {
    uint64_t count;
    uint64_t members;
    uint32_t root, rank, size;
    uint8_t  coll, dtype, op, in_place;
    char     alg[32];
} gx_key_t;

#define GX_CACHE_SLOTS 128

typedef struct {
    gx_key_t   key;
    gx_prog_t *prog; /* NULL: empty slot */
} gx_entry_t;

/* Programs by call shape, bounded like the Go plan cache. */
typedef struct {
    int32_t    cached;
    gx_entry_t slot[GX_CACHE_SLOTS];
} gx_cache_t;

/* GX_PROG_GO is what a shared cache holds for a shape that Go runs (the
 * context path does not take it): a mark, never a program (never run,
 * never released, never read through). */
#define GX_PROG_GO ((gx_prog_t *)(uintptr_t)1)

/* Where a team's tags put their fields: gx_tag(t, sender, seq, step) is
 * base | sender << sender_shift | (seq & seq_mask) << seq_shift | step.
 * A team's own worker uses ucx.MakeTag's layout (ucx/tag.go); the teams
 * of a shared worker name themselves in the base (gx_shared_tags). */
typedef struct {
    uint64_t base;
    uint32_t seq_mask;
    uint8_t  sender_shift, seq_shift;
} gx_tags_t;

/* A context's shared worker: one UCX worker whose endpoints (by context
 * rank) every team of the context on the context path posts on, the tags
 * telling the teams apart, and the programs those teams run, by member
 * list, rank and shape, so that a new team of known members runs its
 * first call in C (docs/ucc.md "The context path"). One lock for all:
 * the teams share the worker. */
typedef struct gx_shared {
    gr_worker_t *w;       /* NULL once Go let go of it */
    int32_t      lock;
    int32_t      refs;    /* Go's (until gx_shared_free) and each team's */
    int32_t      neps;
    gr_ep_t    **eps; /* neps entries, by context rank; NULL: not connected */
    gx_cache_t   cache;
} gx_shared_t;

typedef struct gx_team {
    gr_worker_t    *w;
    gr_ep_t       **eps; /* size entries; NULL: no endpoint */
    int32_t         rank, size;
    uint32_t        seq;     /* last sequence number taken (shared with Go on a team's own worker) */
    int32_t         go_busy; /* Go has a call on the wire or queued (Go sets it) */
    int32_t         lock;    /* held around any use of the worker and the cache (gx_team_lock) */
    int32_t        *lockp;   /* the lock taken: &lock, or the shared worker's */
    int32_t         refs;    /* Go's (until gx_team_free) and each call's */
    gx_tags_t       tags;
    gx_shared_t    *shared;  /* NULL: the team's own worker */
    struct gx_call *live;    /* calls posted and not finished */
    int32_t         cut;     /* a call failed or was withdrawn in flight: the worker may hold messages no call receives */
    gx_cache_t      cache;
} gx_team_t;

typedef struct gx_stepop {
    gr_cop_t        cop; /* first: UCX's callback finds the record by it */
    struct gx_call *call;
    void           *req; /* the UCX request while its callback is due */
    int32_t         step;
} gx_op_t;

typedef struct gx_call {
    gx_prog_t      *prog;
    gx_team_t      *team;
    char           *buf[4]; /* by GX_BUF_*; [0] unused */
    char           *scratch, *own;
    int32_t        *pending, *ready_r, *ready_s, *work, *done;
    uint8_t        *state;
    gx_op_t        *ops;
    int32_t         nready_r, nready_s, nwork, ndone;
    int32_t         remaining, due; /* steps not done; callbacks due */
    uint32_t        seq;
    int32_t         rank;
    int32_t         status; /* GX_RUNNING, GX_DONE or GX_FAILED */
    int32_t         orphan; /* finalized with requests UCX still holds (gx_call_finalize) */
    int32_t         err_ucs, err_step;
    int64_t         err_len;
    int64_t         watch_us; /* when the peers were last checked (or the post) */
    uint32_t        tests;    /* tests since the post: the clock is read every 64th */
    struct gx_call *next;     /* the program's idle list, or the team's live list */
    struct gx_call *prev;
    /* The caller's own record of the call (cpath.c's), kept with it so
     * that a call costs no allocation once its program has run before. */
    _Alignas(16) unsigned char user[160];
} gx_call_t;

/* Programs. gx_prog_new allocates every array (zeroed) and one reference,
 * the caller's; Go fills them. */
gx_prog_t *gx_prog_new(int32_t nsteps, int32_t ndeps);
void       gx_prog_release(gx_prog_t *p);
/* Sets the reduction of the program's reduce steps; -1 for a pair with
 * no kernel. */
int gx_prog_set_reduce(gx_prog_t *p, int dtype, int op, size_t esize);

/* Teams. */
gx_team_t *gx_team_new(gr_worker_t *w, int32_t rank, int32_t size);
/* The team's lock: a spin lock on one word, held for microseconds. */
static inline void gx_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}
static inline void gx_lock(int32_t *word)
{
    while (__atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(word, __ATOMIC_RELAXED)) {
            gx_cpu_relax();
        }
    }
}
static inline void gx_unlock(int32_t *word) { __atomic_store_n(word, 0, __ATOMIC_RELEASE); }
static inline void gx_team_lock(gx_team_t *t) { gx_lock(t->lockp); }
static inline void gx_team_unlock(gx_team_t *t) { gx_unlock(t->lockp); }
void       gx_team_set_ep(gx_team_t *t, int32_t peer, gr_ep_t *ep);
/* Cancels the calls still live, empties the cache and drops Go's
 * reference; the record goes with the last call's gx_call_finalize (a
 * call finalized after its team stays valid, finished or failed). Called
 * with the lock held; it is released (or gone) on return. */
void gx_team_free(gx_team_t *t);
/* Caches p for key (taking a reference); 0, or -1 when key is cached. */
int        gx_cache_put(gx_cache_t *c, const gx_key_t *key, gx_prog_t *p);
gx_prog_t *gx_cache_get(const gx_cache_t *c, const gx_key_t *key);
void       gx_cache_clear(gx_cache_t *c);
/* The same on a team's own cache. */
int        gx_team_put(gx_team_t *t, const gx_key_t *key, gx_prog_t *p);
gx_prog_t *gx_team_get(gx_team_t *t, const gx_key_t *key);

/* Shared workers. gx_shared_new makes the record of worker w (Go owns the
 * worker and its endpoints); gx_shared_free (without the lock) empties
 * the cache, drops Go's reference and frees the record once no team holds
 * one. gx_shared_set_ep lists the endpoint to context rank r (lock held). */
gx_shared_t *gx_shared_new(gr_worker_t *w);
void         gx_shared_free(gx_shared_t *s);
int          gx_shared_set_ep(gx_shared_t *s, uint32_t r, gr_ep_t *ep);
/* The tags of the team of UCC key key (team id << 16 | scope << 8 |
 * scope id) on a shared worker: 0 and *tags set, or -1 where the key or
 * the size does not fit them (GX_SHARED_MAX_SIZE, scope and scope id
 * below 16). Step tags must stay below GX_SHARED_STEPS. */
#define GX_SHARED_MAX_SIZE 4096
#define GX_SHARED_STEPS    65536
int gx_shared_tags(uint32_t key, int32_t size, gx_tags_t *tags);
/* The team of rank among size whose members are the context ranks
 * ranks[], on s with tags: NULL where a member has no endpoint yet or
 * memory ran out. Freed by gx_team_free (its lock is s's). */
gx_team_t *gx_team_new_shared(gx_shared_t *s, int32_t rank, int32_t size, const uint32_t *ranks,
                              const gx_tags_t *tags);

/* Calls, all with the team's lock held. gx_call_new takes an idle call of
 * p or makes one (NULL: out of memory). gx_call_post maps src and dst by
 * the program's layout, takes the team's next sequence number and starts
 * the call (a failed call whose last post UCX still holds a request of
 * fails again instead: GX_FAILED, UCS_ERR_BUSY); gx_call_test progresses the team's worker and the call.
 * gx_call_finalize cancels a running call, keeps its memory for the next
 * call of p and releases the lock (or frees the team, if Go let go of it
 * and this was its last call); a call whose request UCX still holds after
 * the cancel keeps p until that request comes back, then frees itself. */
gx_call_t *gx_call_new(gx_team_t *t, gx_prog_t *p);
int        gx_call_post(gx_call_t *c, const void *src, void *dst);
int        gx_call_test(gx_call_t *c);
void       gx_call_fail(gx_call_t *c); /* cancels what is in flight: GX_FAILED */
/* gx_team_progress_live progresses the team's worker once and every live
 * call as gx_call_test would (a call that ended leaves the live list; its
 * owner's next test reports how); 1 while a call is still live. For Go,
 * which must not drive the worker from another thread while a C call is
 * live, and drives these instead while it waits for them. */
int        gx_team_progress_live(gx_team_t *t);
void       gx_call_finalize(gx_call_t *c);
/* The reason of a GX_FAILED call, in words. */
void gx_call_error(gx_call_t *c, char *buf, size_t len);

#endif
