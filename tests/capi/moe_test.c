/*
 * moe_test: goring's MoE entry (ucc_tl_goring/goring.h: goring_moe_init,
 * goring_moe_layout) under mpirun, without UCC.
 *
 * Each rank draws the expert ids of its own tokens, and MPI allgathers
 * them as a framework does before dispatch; every rank then holds the
 * routing. It asks goring for its expert rows (goring_moe_layout) and
 * checks them against its own reading of the contract, runs a dispatch
 * (odd row size) and checks every expert row byte by byte, applies the
 * gate weights to its experts' outputs as an expert's epilogue does, runs
 * a combine in float32 and in bfloat16 and checks every token's sum.
 * Top-k 1 to 4, every algorithm and the default, block and explicit
 * placements, a rank that owns no token and one that holds no expert.
 * Then it checks that bad calls are refused with the right status and
 * reason, and that ranks passing different calls all fail. Exit 0 only
 * if every rank passed.
 *
 *   mpirun -np 4 build/moe_capi_test
 */
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goring.h"
#define HARNESS_NAME "moe_test"
#include "harness.h"

/* connect is the test's team over MPI_COMM_WORLD (harness.h). */
static goring_team_h connect(goring_context_h ctx) { return mpi_team(ctx, rank, size, die_status); }

/* run posts one call made by goring_moe_init and polls it to completion. */
static void run(goring_team_h team, goring_moe_args_t *a, const char *what, const char *want_alg)
{
    goring_coll_h coll;
    goring_status_t st = goring_moe_init(team, a, &coll);
    if (st != GORING_OK) die_status(what, st);
    const char *alg = goring_coll_algorithm(coll);
    CHECK(strcmp(alg, want_alg) == 0, "%s ran %s, want %s", what, alg, want_alg);
    if ((st = goring_coll_post(coll)) != GORING_OK) die_status(what, st);
    while ((st = goring_coll_test(coll)) == GORING_INPROGRESS) {
        sched_yield();
    }
    if (st != GORING_OK) die_status(what, st);
    if ((st = goring_coll_finalize(coll)) != GORING_OK) die_status(what, st);
}

/* One case's routing, as every rank holds it after the allgather. */
typedef struct {
    int       topk, experts;
    uint64_t *tokens;    /* size entries */
    uint64_t  total;     /* tokens of all ranks */
    uint64_t  base;      /* this rank's first global token */
    int32_t  *ids;       /* topk per token, global order */
    uint32_t *placement; /* experts entries, or NULL: blocks */
} routing_t;

/* tokens_of: rank 1 owns none; the others a few, differently many. */
static uint64_t tokens_of(int r) { return r == 1 ? 0 : 3 + 2 * (uint64_t)r; }

/* expert_of is the expert of global token g's slot j: distinct over j
 * (3 is prime to the even expert counts used here), neighbours often on
 * one rank. */
static int32_t expert_of(uint64_t g, int j, int experts) { return (int32_t)((g * 5 + 3 * (uint64_t)j) % experts); }

/* rank_of is the rank of expert e, by the placement or goring.h's blocks. */
static int rank_of(const routing_t *rt, int e)
{
    return rt->placement ? (int)rt->placement[e] : (int)((uint64_t)e * size / rt->experts);
}

static routing_t make_routing(int topk, int experts, int explicit_placement)
{
    routing_t rt = {.topk = topk, .experts = experts};
    rt.tokens = calloc(size, sizeof(uint64_t));
    int *counts = calloc(size, sizeof(int)), *displs = calloc(size, sizeof(int));
    for (int r = 0; r < size; r++) {
        rt.tokens[r] = tokens_of(r);
        counts[r] = (int)(rt.tokens[r] * topk);
        displs[r] = (int)(rt.total * topk);
        if (r == rank) rt.base = rt.total;
        rt.total += rt.tokens[r];
    }
    /* This rank's own ids, then every rank's: the framework's allgather. */
    uint64_t own = rt.tokens[rank];
    int32_t *mine = calloc(own * topk + 1, sizeof(int32_t));
    for (uint64_t i = 0; i < own; i++)
        for (int j = 0; j < topk; j++) mine[i * topk + j] = expert_of(rt.base + i, j, experts);
    rt.ids = calloc(rt.total * topk + 1, sizeof(int32_t));
    MPI_Allgatherv(mine, counts[rank], MPI_INT32_T, rt.ids, counts, displs, MPI_INT32_T, MPI_COMM_WORLD);
    if (explicit_placement) {
        /* Half the experts on rank 0, the rest on the last rank: the ranks
         * between hold none. */
        rt.placement = calloc(experts, sizeof(uint32_t));
        for (int e = 0; e < experts; e++) rt.placement[e] = e < experts / 2 ? 0 : (uint32_t)(size - 1);
    }
    free(mine);
    free(counts);
    free(displs);
    return rt;
}

static void free_routing(routing_t *rt)
{
    free(rt->tokens);
    free(rt->ids);
    free(rt->placement);
}

static goring_moe_args_t args_of(const routing_t *rt, goring_moe_coll_t c, uint64_t token_bytes)
{
    goring_moe_args_t a = {.coll = c, .token_bytes = token_bytes, .topk = (uint32_t)rt->topk,
                           .num_experts = (uint32_t)rt->experts, .tokens = rt->tokens, .expert_ids = rt->ids,
                           .placement = rt->placement, .mem = GORING_MEM_HOST};
    return a;
}

/* ref_slots is this rank's dispatch dst by the contract, computed here:
 * for each expert on this rank, ascending, the slots that picked it in
 * global token order. Returns the row count. */
static uint64_t ref_slots(const routing_t *rt, uint64_t *slots)
{
    uint64_t m = 0;
    for (int e = 0; e < rt->experts; e++) {
        if (rank_of(rt, e) != rank) continue;
        for (uint64_t g = 0; g < rt->total; g++)
            for (int j = 0; j < rt->topk; j++)
                if (rt->ids[g * rt->topk + j] == e) slots[m++] = g * rt->topk + j;
    }
    return m;
}

static uint8_t token_byte(uint64_t g, uint64_t x) { return (uint8_t)(g * 37 + x * 11 + 1); }

/* expert_out is element x of expert e's output for token g; gate(j) the
 * gate weight of slot j. Small integers: every sum is exact, in bfloat16
 * too, whatever the order. */
static float expert_out(uint64_t g, int e, uint64_t x) { return (float)((int)((g * 3 + e * 5 + x) % 7) - 3); }
static float gate(int j) { return (float)(j + 1); }

static void put(void *p, goring_dtype_t d, float v)
{
    if (d == GORING_DT_FLOAT32) {
        memcpy(p, &v, 4);
        return;
    }
    uint32_t bits;
    memcpy(&bits, &v, 4);
    uint16_t b16 = (uint16_t)(bits >> 16); /* exact: small integers */
    memcpy(p, &b16, 2);
}

static float get(const void *p, goring_dtype_t d)
{
    float v;
    if (d == GORING_DT_FLOAT32) {
        memcpy(&v, p, 4);
        return v;
    }
    uint16_t b16;
    memcpy(&b16, p, 2);
    uint32_t bits = (uint32_t)b16 << 16;
    memcpy(&v, &bits, 4);
    return v;
}

static void test_case(goring_team_h team, int topk, int experts, int explicit_placement, const char *alg)
{
    routing_t rt = make_routing(topk, experts, explicit_placement);
    char what[128];
    snprintf(what, sizeof(what), "top-%d of %d experts, %s placement, alg %s", topk, experts,
             explicit_placement ? "explicit" : "block", alg ? alg : "(default)");
    const char *want_alg = alg ? alg : "multiwrite";

    /* The layout: rows, each row's slot, each expert's rows. */
    uint64_t *want = calloc(rt.total * topk + 1, sizeof(uint64_t));
    uint64_t nrows = ref_slots(&rt, want), rows = 0;
    uint64_t *slots = calloc(nrows + 1, sizeof(uint64_t)), *per = calloc(experts, sizeof(uint64_t));
    goring_moe_args_t a = args_of(&rt, GORING_MOE_DISPATCH, 1);
    goring_status_t st = goring_moe_layout(team, &a, &rows, NULL, NULL, 0);
    if (st != GORING_OK) die_status("moe_layout", st);
    CHECK(rows == nrows, "%s: layout has %lu rows, want %lu", what, (unsigned long)rows, (unsigned long)nrows);
    if (nrows > 0) {
        CHECK(goring_moe_layout(team, &a, &rows, per, slots, nrows - 1) == GORING_ERR_INVALID,
              "%s: short row_slots not refused", what);
    }
    if ((st = goring_moe_layout(team, &a, &rows, per, slots, nrows)) != GORING_OK) die_status("moe_layout", st);
    for (uint64_t m = 0; m < nrows; m++)
        CHECK(slots[m] == want[m], "%s: row %lu has slot %lu, want %lu", what, (unsigned long)m,
              (unsigned long)slots[m], (unsigned long)want[m]);
    for (int e = 0; e < experts; e++) {
        uint64_t n = 0;
        for (uint64_t m = 0; m < nrows; m++) n += rt.ids[want[m]] == e;
        CHECK(per[e] == n, "%s: expert %d has %lu rows, want %lu", what, e, (unsigned long)per[e], (unsigned long)n);
    }

    /* Dispatch, 11-byte rows. */
    const uint64_t H = 11;
    uint64_t own = rt.tokens[rank];
    uint8_t *src = malloc(own * H + 1), *dst = malloc(nrows * H + 1);
    for (uint64_t i = 0; i < own; i++)
        for (uint64_t x = 0; x < H; x++) src[i * H + x] = token_byte(rt.base + i, x);
    memset(dst, 0xee, nrows * H + 1);
    a = args_of(&rt, GORING_MOE_DISPATCH, H);
    a.src = own ? src : NULL; /* an empty side may be NULL */
    a.dst = nrows ? dst : NULL;
    a.alg = alg;
    char w[192];
    snprintf(w, sizeof(w), "dispatch %s", what);
    run(team, &a, w, want_alg);
    int bad = 0;
    for (uint64_t m = 0; m < nrows && !bad; m++)
        for (uint64_t x = 0; x < H && !bad; x++)
            if (dst[m * H + x] != token_byte(want[m] / topk, x)) {
                CHECK(0, "%s: row %lu byte %lu is %#x, want %#x", w, (unsigned long)m, (unsigned long)x,
                      dst[m * H + x], token_byte(want[m] / topk, x));
                bad = 1;
            }
    free(src);
    free(dst);

    /* Combine: this rank's experts' outputs, gated, back to the owners. */
    goring_dtype_t dts[] = {GORING_DT_FLOAT32, GORING_DT_BFLOAT16};
    for (int d = 0; d < 2; d++) {
        size_t es = dts[d] == GORING_DT_FLOAT32 ? 4 : 2;
        const uint64_t n = 7; /* elements per row */
        uint8_t *in = malloc(nrows * n * es + 1), *out = malloc(own * n * es + 1);
        for (uint64_t m = 0; m < nrows; m++) {
            uint64_t g = slots[m] / topk;
            int j = (int)(slots[m] % topk), e = rt.ids[slots[m]];
            for (uint64_t x = 0; x < n; x++) put(in + (m * n + x) * es, dts[d], gate(j) * expert_out(g, e, x));
        }
        a = args_of(&rt, GORING_MOE_COMBINE, n * es);
        a.src = nrows ? in : NULL;
        a.dst = own ? out : NULL;
        a.dtype = dts[d];
        a.alg = alg;
        snprintf(w, sizeof(w), "combine %s %s", es == 4 ? "float32" : "bfloat16", what);
        run(team, &a, w, want_alg);
        bad = 0;
        for (uint64_t i = 0; i < own && !bad; i++) {
            uint64_t g = rt.base + i;
            for (uint64_t x = 0; x < n && !bad; x++) {
                float sum = 0;
                for (int j = 0; j < topk; j++) sum += gate(j) * expert_out(g, rt.ids[g * topk + j], x);
                float got = get(out + (i * n + x) * es, dts[d]);
                if (got != sum) {
                    CHECK(0, "%s: token %lu element %lu is %g, want %g", w, (unsigned long)i, (unsigned long)x, got, sum);
                    bad = 1;
                }
            }
        }
        free(in);
        free(out);
    }
    free(want);
    free(slots);
    free(per);
    free_routing(&rt);
}

/* refused checks that goring_moe_init refuses a with status and a
 * goring_last_error naming why. */
static void refused(goring_team_h team, goring_moe_args_t a, goring_status_t status, const char *why, const char *what)
{
    goring_coll_h h = 0;
    goring_status_t st = goring_moe_init(team, &a, &h);
    char msg[512];
    goring_last_error(msg, sizeof(msg));
    CHECK(st == status, "%s: status %d, want %d (%s)", what, st, status, msg);
    CHECK(strstr(msg, why) != NULL, "%s: last error does not say \"%s\": %s", what, why, msg);
    if (st == GORING_OK) goring_coll_finalize(h);
}

static void test_refusals(goring_team_h team)
{
    routing_t rt = make_routing(2, 2 * size, 0);
    uint8_t buf[4096];
    goring_moe_args_t good = args_of(&rt, GORING_MOE_COMBINE, 8);
    good.src = buf;
    good.dst = buf;
    good.dtype = GORING_DT_FLOAT32;
    goring_moe_args_t a = good;
    a.topk = 0;
    refused(team, a, GORING_ERR_INVALID, "top-k 0", "top-k 0");
    a = good;
    a.topk = (uint32_t)rt.experts + 1;
    refused(team, a, GORING_ERR_INVALID, "cannot serve", "top-k above the experts");
    int32_t saved = rt.ids[0];
    rt.ids[0] = rt.experts; /* one past the last expert */
    refused(team, good, GORING_ERR_INVALID, "out of range", "expert id out of range");
    rt.ids[0] = rt.ids[1];
    refused(team, good, GORING_ERR_INVALID, "twice", "expert id twice in a token");
    rt.ids[0] = saved;
    a = good;
    a.expert_ids = NULL;
    refused(team, a, GORING_ERR_INVALID, "NULL expert_ids", "NULL expert ids");
    a = good;
    a.tokens = NULL;
    refused(team, a, GORING_ERR_INVALID, "NULL tokens", "NULL tokens");
    if (rt.tokens[rank] > 0) {
        a = good;
        a.dst = NULL;
        refused(team, a, GORING_ERR_INVALID, "NULL dst", "NULL dst");
    }
    a = good;
    a.dtype = GORING_DT_FLOAT64;
    refused(team, a, GORING_ERR_NOT_SUPPORTED, "bfloat16 or float32", "combine in float64");
    a = good;
    a.token_bytes = 6;
    refused(team, a, GORING_ERR_INVALID, "whole number", "row not a whole number of elements");
    a = good;
    a.coll = (goring_moe_coll_t)7;
    refused(team, a, GORING_ERR_INVALID, "GORING_MOE_DISPATCH", "unknown collective");
    a = good;
    a.alg = "no_such_alg";
    refused(team, a, GORING_ERR_INVALID, "no_such_alg", "unknown algorithm");
    uint32_t far[64];
    for (int e = 0; e < rt.experts && e < 64; e++) far[e] = (uint32_t)size; /* no such rank */
    a = good;
    a.placement = far;
    refused(team, a, GORING_ERR_INVALID, "placed on rank", "placement outside the team");
    free_routing(&rt);
}

/* test_disagree: the last rank names another algorithm than the others;
 * every rank's call fails with GORING_ERR_INVALID, and the team runs on. */
static void test_disagree(goring_team_h team)
{
    routing_t rt = make_routing(2, 2 * size, 0);
    static uint8_t src[4096], dst[4096];
    goring_moe_args_t a = args_of(&rt, GORING_MOE_DISPATCH, 8);
    a.src = src;
    a.dst = dst;
    a.alg = rank == size - 1 ? "unicast" : "nimble";
    goring_coll_h h;
    goring_status_t st = goring_moe_init(team, &a, &h);
    if (st != GORING_OK) die_status("moe_init (ranks disagree)", st);
    if ((st = goring_coll_post(h)) != GORING_OK) die_status("coll_post (ranks disagree)", st);
    while ((st = goring_coll_test(h)) == GORING_INPROGRESS) {
        sched_yield();
    }
    char msg[512];
    goring_last_error(msg, sizeof(msg));
    CHECK(st == GORING_ERR_INVALID, "ranks that disagree: status %d, want %d (%s)", st, GORING_ERR_INVALID, msg);
    CHECK(strstr(msg, "passed another routing") != NULL, "ranks that disagree: last error %s", msg);
    goring_coll_finalize(h);
    free_routing(&rt);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(goring_api_version() == GORING_API_VERSION && GORING_API_VERSION >= 5, "API version %d, header %d",
          goring_api_version(), GORING_API_VERSION);
    goring_context_h ctx;
    goring_status_t st = goring_context_create("tls=self,sm", &ctx);
    if (st != GORING_OK) die_status("context_create", st);
    goring_team_h team = connect(ctx);

    const char *algs[] = {NULL, "unicast", "multiwrite", "nimble"};
    int cases = 0;
    for (int topk = 1; topk <= 4; topk++)
        for (int p = 0; p < 2; p++)
            for (int i = 0; i < 4; i++, cases++) test_case(team, topk, 2 * size, p, algs[i]);
    test_refusals(team);
    test_disagree(team);
    test_case(team, 2, 2 * size, 0, NULL); /* the team runs on */
    cases++;

    if ((st = goring_team_destroy(team)) != GORING_OK) die_status("team_destroy", st);
    if ((st = goring_context_destroy(ctx)) != GORING_OK) die_status("context_destroy", st);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("moe_test: %d ranks, %s (%d routings, each a dispatch and a float32 and a bfloat16 combine)\n", size,
               all ? "FAILED" : "dispatch and combine correct", cases);
    }
    MPI_Finalize();
    return all ? 1 : 0;
}
