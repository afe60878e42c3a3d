/*
 * ctxpath_test: goring's context path (goring.h: goring_cteam_*; docs/ucc.md
 * "The context path") under mpirun, without UCC, as UCC's shim drives it.
 *
 * MPI stands in for UCC's exchange of context addresses: it gathers every
 * rank's context card once. Then the test makes many teams over the same
 * members, in two member orders (world order, and reversed: team rank r
 * is world rank size-1-r), each a goring_cteam made in C, and runs small
 * allreduce, allgather, reduce_scatter and bcast calls on each, checking
 * every element (one allreduce with rank 0's buffers misaligned, which must
 * take the path its peers take). A call's first team of a member list makes its team in
 * Go (GORING_NEED_TEAM, then goring_team_create_lazy); every later team
 * of that list must run the same shapes without a team in Go: the test
 * counts the teams made in Go and fails if a later team needed one. A
 * call above cpath_max must go to the team (GORING_IN_TEAM) and still be
 * right. Exit 0 only if every rank passed.
 *
 *   mpirun -np 4 build/ctxpath_test [teams [full]]
 */
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goring.h"
#define HARNESS_NAME "ctxpath_test"
#include "harness.h"

/* One team of the test: its C record, its Go team once made, and the
 * arrays the C record reads until it is destroyed. */
typedef struct {
    goring_context_h ctx;
    goring_cteam_h   ct;
    goring_team_h    go;
    uint32_t         key, gen, trank;
    uint32_t        *ranks;
    void           **cards;
    size_t          *bounds;
} team_t;

static long go_teams;  /* teams this rank made in Go */
static long need_team; /* calls the context path sent to make a team first */

static void go_team(team_t *t)
{
    if (t->go != 0) return;
    goring_status_t st = goring_team_create_lazy(t->ctx, t->trank, size, t->key, t->gen, t->cards,
                                                 t->bounds, &t->go);
    if (st != GORING_OK) die_status("team_create_lazy", st);
    go_teams++;
}

/* run makes, posts and polls one call on the team's context path, or on
 * its Go team where the context path leaves the call to it (or where the
 * team has no context path, ct NULL); it returns whether the call ran on
 * the context path. Every rank must take the path its peers take, or
 * their messages go to different workers and the call never completes:
 * the ranks compare their verdicts by MPI before posting, so a
 * disagreement fails the test instead of hanging it. */
static int run(team_t *t, goring_coll_args_t *a, const char *what)
{
    goring_coll_h   h;
    goring_status_t st = GORING_IN_TEAM;
    if (t->ct != NULL && (st = goring_cteam_coll_init(t->ct, t->go, a, &h)) == GORING_NEED_TEAM) {
        need_team++;
        go_team(t);
        st = goring_cteam_coll_init(t->ct, t->go, a, &h);
    }
    if (st != GORING_OK && st != GORING_IN_TEAM) die_status(what, st);
    int on_ctx = st == GORING_OK, lo = 0, hi = 0;
    MPI_Allreduce(&on_ctx, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&on_ctx, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (lo != hi) {
        CHECK(0, "%s key %#x: this rank %s the context path, a peer %s", what, t->key,
              on_ctx ? "took" : "left", on_ctx ? "left it" : "took it");
        if (on_ctx) goring_coll_finalize(h);
        return on_ctx;
    }
    if (!on_ctx) {
        go_team(t);
        if ((st = goring_coll_init(t->go, a, &h)) != GORING_OK) die_status(what, st);
    }
    /* Host calls, of either path, never go on a CUDA stream. */
    if ((st = goring_coll_post_stream(h, (void *)0x1)) != GORING_ERR_NOT_SUPPORTED) die_status(what, st);
    if ((st = goring_coll_prepare_stream(h)) != GORING_ERR_NOT_SUPPORTED) die_status(what, st);
    if ((st = goring_coll_post(h)) != GORING_OK) die_status(what, st);
    while ((st = goring_coll_test(h)) == GORING_INPROGRESS) sched_yield();
    if (st != GORING_OK) die_status(what, st);
    goring_coll_finalize(h);
    return on_ctx;
}

/* misaligned runs the small allreduce's shape again with rank 0's buffers
 * one byte past float alignment, as MPI allows: it must take the path its
 * peers take (the context path: the shape is known). It returns whether
 * the call ran on the context path. */
static int misaligned(team_t *t, int salt)
{
    enum { N = 24 };
    int    me = (int)t->trank;
    float  sraw[N + 1], draw[N + 1], x;
    char  *s = (char *)sraw + (me == 0), *d = (char *)draw + (me == 0);
    for (int i = 0; i < N; i++) {
        x = (float)(me * 100 + i + salt);
        memcpy(s + i * sizeof x, &x, sizeof x);
    }
    goring_coll_args_t a = {.coll = GORING_COLL_ALLREDUCE, .src = s, .dst = d, .count = N,
                            .dtype = GORING_DT_FLOAT32, .op = GORING_OP_SUM, .mem = GORING_MEM_HOST};
    int on_ctx = run(t, &a, "misaligned allreduce");
    for (int i = 0; i < N; i++) {
        float want = (float)(100 * size * (size - 1) / 2 + size * (i + salt));
        memcpy(&x, d + i * sizeof x, sizeof x);
        CHECK(x == want, "misaligned allreduce key %#x element %d = %g, want %g", t->key, i, x, want);
    }
    return on_ctx;
}

/* calls runs the four small shapes (the allreduce twice, misaligned too)
 * and one large allreduce on t, checking every element; it returns how
 * many ran on the context path. */
static int calls(team_t *t, int salt)
{
    enum { N = 24, BIG = 1 << 18 };
    int    me = (int)t->trank, on = 0;
    float  src[N], dst[N], all[N * 64], rs_src[N * 64], rs_dst[N];
    for (int i = 0; i < N; i++) src[i] = (float)(me * 100 + i + salt);
    goring_coll_args_t ar = {.coll = GORING_COLL_ALLREDUCE, .src = src, .dst = dst, .count = N,
                             .dtype = GORING_DT_FLOAT32, .op = GORING_OP_SUM, .mem = GORING_MEM_HOST};
    on += run(t, &ar, "allreduce");
    for (int i = 0; i < N; i++) {
        float want = (float)(100 * size * (size - 1) / 2 + size * (i + salt));
        CHECK(dst[i] == want, "allreduce key %#x element %d = %g, want %g", t->key, i, dst[i], want);
    }
    on += misaligned(t, salt);
    goring_coll_args_t ag = {.coll = GORING_COLL_ALLGATHER, .src = src, .dst = all, .count = N,
                             .dtype = GORING_DT_FLOAT32, .mem = GORING_MEM_HOST};
    on += run(t, &ag, "allgather");
    for (int q = 0; q < size; q++)
        for (int i = 0; i < N; i++)
            CHECK(all[q * N + i] == (float)(q * 100 + i + salt), "allgather key %#x block %d element %d", t->key, q, i);
    for (int i = 0; i < N * size; i++) rs_src[i] = (float)(me + i + salt);
    goring_coll_args_t rs = {.coll = GORING_COLL_REDUCE_SCATTER, .src = rs_src, .dst = rs_dst, .count = N,
                             .dtype = GORING_DT_FLOAT32, .op = GORING_OP_SUM, .mem = GORING_MEM_HOST};
    on += run(t, &rs, "reduce_scatter");
    for (int i = 0; i < N; i++) {
        float want = (float)(size * (size - 1) / 2 + size * (me * N + i + salt));
        CHECK(rs_dst[i] == want, "reduce_scatter key %#x element %d = %g, want %g", t->key, i, rs_dst[i], want);
    }
    float bc[N];
    for (int i = 0; i < N; i++) bc[i] = me == size - 1 ? (float)(i * 3 + salt) : -1.0f;
    goring_coll_args_t b = {.coll = GORING_COLL_BCAST, .dst = bc, .count = N, .root = (uint32_t)size - 1,
                            .dtype = GORING_DT_FLOAT32, .mem = GORING_MEM_HOST};
    on += run(t, &b, "bcast");
    for (int i = 0; i < N; i++) CHECK(bc[i] == (float)(i * 3 + salt), "bcast key %#x element %d", t->key, i);
    /* Above cpath_max: the team's, and right. */
    float *big = malloc(sizeof(float) * BIG), *out = malloc(sizeof(float) * BIG);
    for (int i = 0; i < BIG; i++) big[i] = (float)(me + (i % 7));
    goring_coll_args_t lg = {.coll = GORING_COLL_ALLREDUCE, .src = big, .dst = out, .count = BIG,
                             .dtype = GORING_DT_FLOAT32, .op = GORING_OP_SUM, .mem = GORING_MEM_HOST};
    CHECK(!run(t, &lg, "large allreduce"), "a call above cpath_max ran on the context path");
    for (int i = 0; i < BIG; i++) {
        if (out[i] != (float)(size * (size - 1) / 2 + size * (i % 7))) {
            CHECK(0, "large allreduce element %d = %g", i, out[i]);
            break;
        }
    }
    free(big);
    free(out);
    return on;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int teams = argc > 1 ? atoi(argv[1]) : 40;
    /* argv[2] "full": rank 0 first makes as many contexts as ctxpath.c's
     * table of shared workers holds (TLG_CONTEXTS), so its test context
     * has a shared worker C cannot list: every call must then run in the
     * teams, on every rank alike. */
    int full = argc > 2 && strcmp(argv[2], "full") == 0;
    CHECK(goring_api_version() == GORING_API_VERSION, "API version %d, header %d", goring_api_version(), GORING_API_VERSION);
    enum { TABLE = 16 };
    goring_context_h fillers[TABLE];
    goring_context_h ctx;
    goring_status_t  st;
    for (int i = 0; full && rank == 0 && i < TABLE; i++) {
        if ((st = goring_context_create("tls=self", &fillers[i])) != GORING_OK) die_status("context_create", st);
    }
    if ((st = goring_context_create("tls=self,sm", &ctx)) != GORING_OK) die_status("context_create", st);

    /* Every rank's context card, as UCC's address exchange gives them. */
    size_t longest = 0;
    char  *slots   = mpi_cards(goring_context_card, ctx, &longest, die_status);

    /* Two member lists over the same processes: world order and reversed. */
    uint32_t *ranks[2];
    void    **cards[2];
    size_t   *bounds[2];
    for (int o = 0; o < 2; o++) {
        ranks[o]  = malloc(sizeof(uint32_t) * size);
        cards[o]  = malloc(sizeof(void *) * size);
        bounds[o] = malloc(sizeof(size_t) * size);
        for (int r = 0; r < size; r++) {
            int w        = o == 0 ? r : size - 1 - r;
            ranks[o][r]  = (uint32_t)w;
            cards[o][r]  = slots + (size_t)w * longest;
            bounds[o][r] = longest;
        }
    }
    long ctx_calls = 0, later_go = 0;
    for (int k = 0; k < teams; k++) {
        int    o = k % 2;
        team_t t = {.ctx = ctx, .key = (uint32_t)(k + 1) << 16 | 1u << 8, .gen = 1,
                    .trank = (uint32_t)(o == 0 ? rank : size - 1 - rank), .ranks = ranks[o],
                    .cards = cards[o], .bounds = bounds[o]};
        st = goring_cteam_create(ctx, t.trank, size, t.key, t.ranks, 0x5eed0 + o, t.cards, t.bounds, &t.ct);
        if (st == GORING_ERR_NOT_SUPPORTED && full) {
            t.ct = NULL; /* as UCC's shim: the team runs every call */
        } else if (st != GORING_OK) {
            die_status("cteam_create", st);
        }
        long before = need_team;
        ctx_calls += calls(&t, k);
        if (k >= 2) later_go += need_team - before;
        goring_cteam_destroy(t.ct);
        if (t.go != 0 && (st = goring_team_destroy(t.go)) != GORING_OK) die_status("team_destroy", st);
    }
    if (full) {
        CHECK(ctx_calls == 0, "%ld small calls ran on the context path, which a member's C cannot run", ctx_calls);
    } else {
        CHECK(ctx_calls == 5L * teams, "%ld of %d small calls ran on the context path", ctx_calls, 5 * teams);
        CHECK(later_go == 0, "teams after the first of each member list needed a team in Go for %ld small calls", later_go);
    }

    if ((st = goring_context_destroy(ctx)) != GORING_OK) die_status("context_destroy", st);
    for (int i = 0; full && rank == 0 && i < TABLE; i++) {
        if ((st = goring_context_destroy(fillers[i])) != GORING_OK) die_status("context_destroy", st);
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("ctxpath_test: %d ranks, %d teams over 2 member orders: %s; %ld small calls on the context path; "
               "rank 0 made %ld teams in Go (for the large calls), %ld at a small call's request\n",
               size, teams, all ? "FAILED" : "all correct", ctx_calls, go_teams, need_team);
    }
    for (int o = 0; o < 2; o++) {
        free(ranks[o]);
        free(cards[o]);
        free(bounds[o]);
    }
    free(slots);
    MPI_Finalize();
    return all ? 1 : 0;
}
