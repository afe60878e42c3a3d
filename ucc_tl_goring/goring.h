/*
 * goring.h: the C API between goring's UCC team layer shim (cshim/) and
 * its Go side, which implements it in this folder (ucc_tl_goring/, built
 * as a shared library, over package team/).
 *
 * One call per UCC entry point, all coarse: a context owns a UCX context,
 * a team owns a UCX worker of its own and the endpoints to its peers
 * (teams never share a tag space), a collective is initialised,
 * posted, tested and finalised. goring_coll_test never blocks, so it can
 * run from UCC's progress engine. Nothing here calls back into the
 * caller. Handles are opaque 64-bit values, 0 meaning none. A negative
 * status is an error whose text goring_last_error returns; a Go panic is
 * caught at this boundary and becomes GORING_ERR_INTERNAL.
 *
 * The shim knows nothing of schedules; the Go side knows nothing of UCC.
 */
#ifndef GORING_H_
#define GORING_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: alltoall, alltoallv (counts and displacements), in-place reduce_scatter.
 * 3: goring_team_scores (the model's UCC scores) and the scores option.
 * 4: GORING_ERR_DECLINED from goring_team_scores.
 * 5: MoE dispatch and combine: goring_moe_args_t, goring_moe_init (a
 *    goring_coll_h for goring_coll_post/test/finalize) and
 *    goring_moe_layout (a rank's expert rows, to size its buffers).
 * 6: goring_team_create_lazy takes the team's generation.
 * 7: the context path (goring_cteam_*), GORING_NEED_TEAM, GORING_IN_TEAM.
 * 8: goring_coll_post_stream and goring_coll_prepare_stream (calls on
 *    the caller's CUDA stream). */
#define GORING_API_VERSION 8

typedef enum {
    GORING_OK                = 0,
    GORING_INPROGRESS        = 1,
    GORING_ERR_NOT_SUPPORTED = -1, /* this call is not for goring: let another TL take it */
    GORING_ERR_INVALID       = -2, /* bad argument */
    GORING_ERR_NO_MEMORY     = -3,
    GORING_ERR_NO_RESOURCE   = -4, /* UCX missing or failing */
    GORING_ERR_TIMEOUT       = -5, /* a collective passed its deadline */
    GORING_ERR_INTERNAL      = -6, /* a bug, a Go panic included */
    GORING_ERR_DECLINED      = -7, /* goring's model claims nothing on this team */
    GORING_NEED_TEAM         = 2,  /* goring_cteam_coll_init: call again with the team made */
    GORING_IN_TEAM           = 3   /* goring_cteam_coll_init: the team runs this call (goring_coll_init) */
} goring_status_t;

typedef uint64_t goring_context_h;
typedef uint64_t goring_team_h;
typedef uint64_t goring_coll_h;
typedef struct goring_cteam *goring_cteam_h; /* a team on the context path (below) */

typedef enum {
    GORING_COLL_ALLGATHER      = 1,
    GORING_COLL_ALLREDUCE      = 2,
    GORING_COLL_REDUCE_SCATTER = 3,
    GORING_COLL_BCAST          = 4,
    GORING_COLL_ALLTOALL       = 5,
    GORING_COLL_ALLTOALLV      = 6
} goring_coll_type_t;

typedef enum {
    GORING_DT_INT8 = 1, GORING_DT_INT16, GORING_DT_INT32, GORING_DT_INT64,
    GORING_DT_UINT8, GORING_DT_UINT16, GORING_DT_UINT32, GORING_DT_UINT64,
    GORING_DT_FLOAT16, GORING_DT_BFLOAT16, GORING_DT_FLOAT32, GORING_DT_FLOAT64
} goring_dtype_t;

typedef enum {
    GORING_OP_SUM = 1, GORING_OP_PROD, GORING_OP_MIN, GORING_OP_MAX,
    GORING_OP_LAND, GORING_OP_LOR, GORING_OP_BAND, GORING_OP_BOR, GORING_OP_BXOR
} goring_op_t;

typedef enum {
    GORING_MEM_HOST    = 0,
    GORING_MEM_CUDA    = 1, /* CUDA device memory (cudaMalloc) */
    GORING_MEM_UNKNOWN = 2  /* the caller does not know: goring asks the CUDA
                               driver (pointer attributes), never guesses */
} goring_mem_type_t;

typedef struct goring_coll_args {
    goring_coll_type_t coll;
    const void        *src;      /* ignored when in_place */
    void              *dst;
    uint64_t           count;    /* elements: allgather and reduce_scatter per
                                    rank, allreduce the vector, bcast the
                                    message, alltoall per peer (src and dst
                                    hold size*count); unused by alltoallv */
    goring_dtype_t     dtype;
    goring_op_t        op;       /* reductions only */
    uint32_t           root;     /* bcast */
    int                in_place; /* UCC_COLL_ARGS_FLAG_IN_PLACE. reduce_scatter in
                                    place: dst holds the size*count input
                                    elements and the result goes to this
                                    rank's block of it, dst + rank*count
                                    elements (UCC's meaning). Not for
                                    alltoall or alltoallv */
    goring_mem_type_t  mem;
    const char        *alg;      /* NULL or "": the team's choice */
    /* alltoallv only, arrays of team size in elements, read during
     * goring_coll_init only: src_counts[j] elements go to rank j from
     * src + src_displs[j], dst_counts[i] elements come from rank i to
     * dst + dst_displs[i]. NULL displacements: packed in rank order (the
     * prefix sums of the counts). Receive blocks must not overlap. */
    const uint64_t    *src_counts;
    const uint64_t    *src_displs;
    const uint64_t    *dst_counts;
    const uint64_t    *dst_displs;
} goring_coll_args_t;

/* Mixture-of-Experts token traffic, which UCC has no collective for
 * (docs/contracts.md "Dispatch and combine", "MoE dispatch and combine
 * from C"). A routing: rank r owns tokens[r] token rows of token_bytes
 * bytes; token i of rank r has the global id g = tokens[0] + ... +
 * tokens[r-1] + i; its slot j (0 <= j < topk) picks expert
 * expert_ids[g*topk + j]; expert e lives on rank placement[e]. A token's
 * experts are distinct; several may live on one rank, a rank may own no
 * token and hold no expert.
 *
 * Every rank passes the whole routing, the same on every rank (a
 * framework allgathers its top-k ids, 4*topk bytes per token, before
 * dispatch, as any all-to-all-v needs its counts): every buffer size and
 * offset is computed from it, no counts are exchanged (only a hash that
 * checks the ranks agree, goring_moe_init).
 *
 *   dispatch: src = this rank's tokens[rank] rows in token order; dst =
 *             for each expert on this rank, ascending id, the rows of the
 *             tokens that picked it, in global token order
 *             (goring_moe_layout gives the rows and each row's slot).
 *             Bytes move as they are: any token_bytes.
 *   combine:  src = dispatch's dst layout, row for row, each row the
 *             expert's output for that (token, slot) already multiplied
 *             by its gate weight (the expert's rank applies it: the slot
 *             of each row is goring_moe_layout's row_slots); dst =
 *             dispatch's src layout, row i the sum of token i's topk rows
 *             in dtype, added in the order the algorithm's plan fixes
 *             (the same bits on every run of one plan; algorithms may
 *             differ in the last bits). */
typedef enum {
    GORING_MOE_DISPATCH = 1,
    GORING_MOE_COMBINE  = 2
} goring_moe_coll_t;

typedef struct goring_moe_args {
    goring_moe_coll_t  coll;
    uint64_t           token_bytes; /* one row: hidden size x element size; for
                                       combine a multiple of dtype's size */
    uint32_t           topk;        /* experts per token, 1..num_experts */
    uint32_t           num_experts;
    const uint64_t    *tokens;      /* team size entries: tokens rank r owns */
    const int32_t     *expert_ids;  /* topk per token, every rank's tokens in
                                       global order (may be NULL with no
                                       token at all) */
    const uint32_t    *placement;   /* num_experts entries: the rank of expert
                                       e; NULL: contiguous blocks, expert e on
                                       rank e*size/num_experts (num_experts =
                                       size*E puts E experts on every rank) */
    const void        *src;         /* NULL allowed where the side is empty */
    void              *dst;
    goring_mem_type_t  mem;         /* host memory only for now: CUDA is
                                       GORING_ERR_NOT_SUPPORTED */
    goring_dtype_t     dtype;       /* combine: GORING_DT_BFLOAT16 or
                                       GORING_DT_FLOAT32; dispatch: ignored */
    const char        *alg;         /* NULL or "": multiwrite (unicast where
                                       the nodes' GPU counts differ); or
                                       "unicast", "multiwrite", "nimble" */
} goring_moe_args_t;

/* The Go side defines GORING_TYPES_ONLY: cgo writes its own prototypes
 * for exported functions and cannot spell const, which C does not count
 * in the ABI. */
#ifndef GORING_TYPES_ONLY

/* The API version the library implements (GORING_API_VERSION). */
int goring_api_version(void);

/* Creates a context: a UCX context shared by the teams made on it.
 * options is a semicolon-separated list of key=value (NULL or "" for the
 * defaults); unknown keys are an error:
 *   tls=LIST           UCX transports (default: UCX's own choice)
 *   alg_<coll>=NAME    algorithm per collective (allgather, allreduce,
 *                      reduce_scatter, bcast, alltoallv; alltoall runs
 *                      alltoallv's), or "auto"
 *   timeout_ms=N|inf   deadline of one collective (default inf: none; the
 *                      timeout policy is goring's exec/deadline.go)
 *   ipc=y|n            CUDA buffers of ranks on one host: y (default) goring
 *                      pushes them itself with CUDA IPC; n through UCX
 *   lanes=W            UCX workers per rank (default 1, at most 64): each
 *                      drives part of a host buffer (Multi-lane)
 *   calibration=FILE   goring.calibration/v1 file: with ipc=y, transfers
 *                      between GPUs of the host are split over the paths
 *                      it measured (an unreadable file, or one of another
 *                      machine, fails the context)
 *   keepawake=D|off    keep the Go runtime awake between collectives, a
 *                      duration up to 9ms (default off: it costs the
 *                      runtime's monitor 6-18% of a core while
 *                      collectives come; docs/ucc.md "Keeping the runtime
 *                      awake")
 *   scores=model|fixed model (default): goring_team_scores claims the
 *                      sizes goring's model predicts faster than tl/ucp;
 *                      fixed: it claims none
 *   cpath_max=N[K|M]   largest host allgather, allreduce, reduce_scatter,
 *                      bcast (bytes of the vector per rank) or alltoall
 *                      (bytes a rank sends) that runs in goring's C
 *                      executor once its plan is cached, never entering Go
 *                      (default 64K; 0: off; docs/ucc.md "Small
 *                      collectives in C")
 *   crossmem=off|auto|T host allreduce and allgather of teams on one host
 *                      by reading the peers' buffers (process_vm_readv),
 *                      each rank's part on threads: off (default); auto
 *                      (the rank's CPUs shared among its host's ranks, the
 *                      calls where it measured faster); T threads (1-16)
 *                      for every such call above cpath_max (docs/ucc.md
 *                      "Reading the peers' memory")
 */
goring_status_t goring_context_create(const char *options, goring_context_h *ctx);

/* Destroys a context whose teams are all destroyed. */
goring_status_t goring_context_destroy(goring_context_h ctx);

/* Team creation mirrors UCC's: create (a UCX worker of the team's own, so
 * teams never share a tag space), publish the card, gather every rank's
 * card out of band, connect. */
goring_status_t goring_team_create(goring_context_h ctx, uint32_t rank, uint32_t size,
                                   goring_team_h *team);

/* The team's card: what every other rank must see (this rank's UCX worker
 * address and host name). *len is the capacity of buf on entry and the
 * card's length on return; with buf NULL only the length is returned.
 * Cards of different ranks may differ in length. */
goring_status_t goring_team_card(goring_team_h team, void *buf, size_t *len);

/* Connects the team to every peer. cards holds size slots of slot bytes
 * each; slot r starts with rank r's card (padding after it is ignored). */
goring_status_t goring_team_connect(goring_team_h team, const void *cards, size_t slot);

/* Copies the context's card, what a framework publishes once per process
 * for goring_team_create_lazy (UCC: goring's context address), into buf;
 * *len follows goring_team_card's rule. */
goring_status_t goring_context_card(goring_context_h ctx, void *buf, size_t *len);

/* Creates rank's share of a team of size processes from their context
 * cards (cards[r]: rank r's goring_context_card, bounds[r] bytes readable
 * there; NULL where that process has no goring context, which makes the
 * team GORING_ERR_NOT_SUPPORTED), with no communication: the team opens
 * its workers and exchanges its cards on its first collective, and a team
 * that runs none costs nothing. key must be the same on every member and
 * differ between the live teams of one context. gen numbers the teams of
 * one key and member list (1, 2, ... in creation order, the same on every
 * member: a later team's exchange must not take an earlier one's messages
 * still in flight); 0 lets the context count them, which is right only
 * where every team of the list is created here. */
goring_status_t goring_team_create_lazy(goring_context_h ctx, uint32_t rank, uint32_t size,
                                        uint32_t key, uint32_t gen, void **cards, size_t *bounds,
                                        goring_team_h *team);

/* Tells the team which team layers the UCC context holds, by UCC's
 * names separated by commas ("ucp,cuda,nccl,goring"): goring claims CUDA
 * calls by measurement only where it was faster than each of those. */
goring_status_t goring_team_layers(goring_team_h team, const char *names);

/* The UCC score string of the collectives and sizes goring's model
 * predicts faster than UCC's tl/ucp on this team (connected, or lazy),
 * then, after a '|', the CUDA sizes goring was measured faster than every
 * GPU layer of the context (goring_team_layers): two score strings, each
 * to be applied in turn
 * ("allgather:cuda:0-inf:11#..."; "" where it claims none or
 * scores=fixed), and in *summary_len's buffer a line saying what it found.
 * Each buffer follows goring_team_card's rule: *len is its capacity on
 * entry and the NUL-terminated string's length (NUL included) on return;
 * with the buffer NULL only the length is returned. Where the model claims
 * nothing (scores=model), it returns GORING_ERR_DECLINED, lengths and
 * summary set as for GORING_OK: goring has nothing to offer the team (UCC's
 * shim then gives it no score, and makes no team of its members again). */
goring_status_t goring_team_scores(goring_team_h team, char *buf, size_t *len,
                                   char *summary, size_t *summary_len);

/* Destroys a team; collectives still in flight are cancelled. */
goring_status_t goring_team_destroy(goring_team_h team);

/* The context path (docs/ucc.md "The context path"): small host calls of
 * the lazy teams of a context run in C on one worker the context opened
 * at its creation, whose endpoints (by context rank) every team shares and
 * whose tags name the team by its key, with the programs kept per member
 * list: a new team of members seen before runs its first call without
 * entering Go, without workers or cards of its own. A goring_cteam_h is
 * the team's record there, made and destroyed in C.
 *
 * goring_cteam_create makes it for rank of a team of size with key (as
 * goring_team_create_lazy's; UCC's team id << 16 | scope << 8 | scope id),
 * whose members are the context ranks ranks[] (members: a key of that
 * list, the same on every member) and published the context cards
 * cards[]/bounds[]; the caller keeps those three arrays until
 * goring_cteam_destroy. GORING_ERR_NOT_SUPPORTED: the context has no
 * shared worker (cpath_max=0) or the key or size does not fit its tags;
 * every member gets the same answer. */
goring_status_t goring_cteam_create(goring_context_h ctx, uint32_t rank, uint32_t size, uint32_t key,
                                    const uint32_t *ranks, uint64_t members, void **cards,
                                    size_t *bounds, goring_cteam_h *team);
void            goring_cteam_destroy(goring_cteam_h team);

/* Prepares a call on the context path: GORING_OK with *coll a call for
 * goring_coll_post/test/finalize/algorithm; GORING_IN_TEAM: the context
 * path does not run this shape, the team does (goring_coll_init on the
 * team made with goring_team_create_lazy); GORING_NEED_TEAM: the context
 * has not seen this shape on these members, and go is 0: make the team
 * and call again with it (go names it; Go plans the shape once). Every
 * member reaches the same verdict on the same call. */
goring_status_t goring_cteam_coll_init(goring_cteam_h team, goring_team_h go,
                                       const goring_coll_args_t *args, goring_coll_h *coll);

/* Prepares one collective (plan, buffers, executor). GORING_ERR_NOT_SUPPORTED
 * means another team layer should run it (device memory, an unsupported
 * type, a size goring does not handle). args, alg's string included, is
 * read during this call only (the buffers it points at are the call's). */
goring_status_t goring_coll_init(goring_team_h team, const goring_coll_args_t *args,
                                 goring_coll_h *coll);

/* Starts the collective. Collectives of one team run one at a time, in
 * the order they were posted (MPI's collective ordering makes that order
 * the same on every rank); a later one starts when the earlier completes. */
goring_status_t goring_coll_post(goring_coll_h coll);

/* Posts the collective on the caller's CUDA stream, a CUstream of the
 * primary context of the GPU that holds its buffers: its device work runs
 * after the work queued on stream before this call, and work queued on
 * stream after it runs after the collective, with no host step between;
 * goring_coll_test still reports completion. goring runs it so where the
 * call runs as kernels of a node team whose GPU regions are set up (an
 * earlier call of the team has run) and the team has no other call in
 * flight, nor one this function refused that is not posted yet.
 * Otherwise it returns GORING_ERR_NOT_SUPPORTED, posts nothing
 * and leaves the call as it was: the caller then orders it against the
 * stream itself and posts it with goring_coll_post (UCC's triggered post
 * does). */
goring_status_t goring_coll_post_stream(goring_coll_h coll, void *stream);

/* Readies the team so that goring_coll_post_stream takes the collective,
 * where it refuses it only because the team has not set itself up (a
 * lazy team not connected, GPU regions not made and mapped: its first
 * calls). It runs that set-up with the other ranks, which must make the
 * same call at the same collective, and returns when it is done, having
 * moved no data: GORING_OK if goring_coll_post_stream now takes the call,
 * GORING_ERR_NOT_SUPPORTED at once if it never will (host memory, not a
 * node call, another call of the team in flight). Why not post such a call
 * behind a held stream instead: the set-up allocates and maps GPU memory,
 * which the driver may order behind the held stream. */
goring_status_t goring_coll_prepare_stream(goring_coll_h coll);

/* Progresses the team without blocking: GORING_OK when this collective is
 * complete, GORING_INPROGRESS while it is not, an error otherwise. */
goring_status_t goring_coll_test(goring_coll_h coll);

/* Releases a collective that is complete, failed or was never posted. */
goring_status_t goring_coll_finalize(goring_coll_h coll);

/* Prepares one rank's dispatch or combine (plan, buffers, executor) on a
 * team, as goring_coll_init does a collective: *coll is a goring_coll_h
 * for goring_coll_post, goring_coll_test, goring_coll_finalize and
 * goring_coll_algorithm, and runs in post order with the team's other
 * collectives. Every rank of the team must make the same call with the
 * same routing: the ranks compare a hash of it before the first post
 * moves a row, and where they differ goring_coll_test fails the call on
 * every rank with GORING_ERR_INVALID, nothing moved. The arrays are read during this call only. A routing or
 * buffer that is wrong (an expert id out of range or twice in a token,
 * topk 0 or above num_experts, a placement outside the team, a NULL
 * array or buffer where rows are due, an unknown algorithm) is
 * GORING_ERR_INVALID with the reason in goring_last_error; a combine
 * dtype other than bfloat16 or float32, device memory, or an algorithm
 * the team's topology cannot run is GORING_ERR_NOT_SUPPORTED. */
goring_status_t goring_moe_init(goring_team_h team, const goring_moe_args_t *args,
                                goring_coll_h *coll);

/* This rank's expert side of the routing in args (src, dst, mem, dtype,
 * alg and coll are ignored), computed as goring_moe_init's plans compute
 * it: *rows is the rows of its dispatch dst, and of its combine src
 * (rows*token_bytes bytes). expert_rows, if not NULL, receives
 * num_experts entries: the rows of expert e's group if e lives on this
 * rank, else 0 (the groups follow in ascending e). row_slots, if not
 * NULL, receives the slot g*topk + j (global token g, its slot j) of
 * each row, *rows entries; slots_cap is its capacity in entries, and a
 * smaller one than *rows is GORING_ERR_INVALID (*rows set): call once
 * with row_slots NULL to learn *rows. Refuses a bad routing as
 * goring_moe_init does. */
goring_status_t goring_moe_layout(goring_team_h team, const goring_moe_args_t *args,
                                  uint64_t *rows, uint64_t *expert_rows,
                                  uint64_t *row_slots, size_t slots_cap);

/* The algorithm goring_coll_init or goring_moe_init chose (static string,
 * "" if unknown). */
const char *goring_coll_algorithm(goring_coll_h coll);

/* Copies the last error's text of this process (NUL-terminated, truncated
 * to len) and returns its full length. */
size_t goring_last_error(char *buf, size_t len);

#endif /* GORING_TYPES_ONLY */

#ifdef __cplusplus
}
#endif

#endif /* GORING_H_ */
