/*
 * tl_goring.h: goring's UCC team layer ("tl/goring"), the C side.
 *
 * UCC loads libucc_tl_goring.so from its component directory and finds the
 * interface ucc_tl_goring. Every UCC entry point here is a thin forward to
 * one call of goring's C API (goring.h), implemented in Go by
 * libgoring.so: this file set knows UCC, the Go side knows schedules.
 * Built out of UCC's tree against its sources (UCC_SRC: the internal
 * headers of components/tl) and its installation (UCC_PREFIX).
 */
#ifndef UCC_TL_GORING_H_
#define UCC_TL_GORING_H_

#include "components/tl/ucc_tl.h"
#include "utils/ucc_mpool.h"
#include "components/tl/ucc_tl_log.h"

#include "goring.h"
#include "tl_goring_gens.h"
#include "tl_goring_idle.h"
#include "tl_goring_memo.h"
#include "tl_goring_retire.h"

/* Below tl/ucp (10) so that installing goring changes nothing until a user
 * asks for it (UCC_TL_GORING_TUNE); UCC wants every TL's default score
 * distinct. */
#define UCC_TL_GORING_DEFAULT_SCORE 5

#define UCC_TL_GORING_SUPPORTED_COLLS                                          \
    (UCC_COLL_TYPE_ALLGATHER | UCC_COLL_TYPE_ALLREDUCE |                       \
     UCC_COLL_TYPE_REDUCE_SCATTER | UCC_COLL_TYPE_BCAST |                      \
     UCC_COLL_TYPE_ALLTOALL | UCC_COLL_TYPE_ALLTOALLV)

/* Collectives goring runs on host memory only (their device path has not
 * run through the team layer yet): not claimed for CUDA memory by
 * default, so UCC's own layers keep them there without a refusal first. */
#define UCC_TL_GORING_HOST_ONLY_COLLS                                          \
    (UCC_COLL_TYPE_ALLTOALL | UCC_COLL_TYPE_ALLTOALLV)

typedef struct ucc_tl_goring_iface {
    ucc_tl_iface_t super;
} ucc_tl_goring_iface_t;
extern ucc_tl_goring_iface_t ucc_tl_goring;

typedef struct ucc_tl_goring_lib_config {
    ucc_tl_lib_config_t super;
} ucc_tl_goring_lib_config_t;

/* UCC_TL_GORING_* settings, handed to goring_context_create as options. */
typedef struct ucc_tl_goring_context_config {
    ucc_tl_context_config_t super;
    char                   *ucx_tls;
    char                   *alg_allgather;
    char                   *alg_allreduce;
    char                   *alg_reduce_scatter;
    char                   *alg_bcast;
    char                   *alg_alltoallv; /* alltoall runs it too */
    char                   *timeout_ms; /* checked by goring: inf or N > 0 */
    char                   *ipc;        /* checked by goring: y or n */
    char                   *lanes;      /* checked by goring: 1..64 */
    char                   *calibration; /* goring.calibration/v1 file, checked by goring */
    char                   *claims;      /* goring.claims/v1 file, checked by goring */
    char                   *keepawake;   /* checked by goring: off or a duration <= 9ms */
    char                   *cpath_max;   /* checked by goring: bytes, 0 turns the C path off */
    char                   *scores;      /* checked by goring: model or fixed */
    char                   *crossmem;    /* checked by goring: off, auto or 1..16 threads */
    char                   *node_max;    /* checked by goring: bytes, 0 turns node kernels off */
    char                   *node_linger; /* checked by goring: off or a duration <= 10ms */
    char                   *node_ll;     /* checked by goring: off or bytes <= 512K */
} ucc_tl_goring_context_config_t;

typedef struct ucc_tl_goring_lib {
    ucc_tl_lib_t super;
} ucc_tl_goring_lib_t;
UCC_CLASS_DECLARE(ucc_tl_goring_lib_t, const ucc_base_lib_params_t *,
                  const ucc_base_config_t *);

typedef struct ucc_tl_goring_context {
    ucc_tl_context_t super;
    goring_context_h handle;
    ucc_mpool_t      tasks; /* the layer's tasks, as UCC's own layers pool theirs */
    int              tune_reported; /* an unreadable UCC_TL_GORING_TUNE was logged */
    tl_goring_idle_t idle;          /* member lists goring declines (tl_goring_idle.h) */
    tl_goring_memo_t memo;          /* the model's answer per member list (tl_goring_memo.h) */
    tl_goring_gens_t gens;          /* teams made per key and member list (tl_goring_gens.h) */
    tl_goring_retired_t retired;    /* freed teams not yet destroyed (tl_goring_retire.h) */
} ucc_tl_goring_context_t;
UCC_CLASS_DECLARE(ucc_tl_goring_context_t, const ucc_base_context_params_t *,
                  const ucc_base_config_t *);

/* Team creation gathers the team cards over UCC's out-of-band allgather in
 * two rounds: every card's length, then the cards padded to the longest. */
typedef enum {
    UCC_TL_GORING_TEAM_LENGTHS,
    UCC_TL_GORING_TEAM_CARDS,
    UCC_TL_GORING_TEAM_READY
} ucc_tl_goring_team_phase_t;

typedef struct ucc_tl_goring_team {
    ucc_tl_team_t              super;
    goring_team_h              handle;
    ucc_team_oob_coll_t        oob;
    void                      *oob_req;
    ucc_tl_goring_team_phase_t phase;
    uint64_t                   my_len;
    uint64_t                  *lens;
    uint64_t                   slot;
    char                      *card;
    char                      *cards;
    uint64_t                   members; /* tl_goring_idle_key of a lazy team's members; 0: none */
    /* A lazy team is made in Go when goring first has work for it
     * (ucc_tl_goring_team_go): until then it keeps what that needs. */
    pthread_mutex_t            go_lock;
    uint32_t                   key, gen; /* goring_team_create_lazy's */
    void                     **member_cards;  /* in UCC's address storage */
    size_t                    *member_bounds;
    goring_cteam_h             ct; /* the team on the context path; NULL: none */
} ucc_tl_goring_team_t;
UCC_CLASS_DECLARE(ucc_tl_goring_team_t, ucc_base_context_t *,
                  const ucc_base_team_params_t *);

typedef struct ucc_tl_goring_task {
    ucc_coll_task_t super;
    goring_coll_h   handle;
} ucc_tl_goring_task_t;

#define UCC_TL_GORING_TEAM_CTX(_team)                                          \
    (ucc_derived_of((_team)->super.super.context, ucc_tl_goring_context_t))

/* Makes a lazy team in Go if it is not made yet (GORING_OK), or says why
 * it cannot be. */
goring_status_t ucc_tl_goring_team_go(ucc_tl_goring_team_t *team);

/* Destroys the context's retired teams (tl_goring_retire.h). */
void ucc_tl_goring_flush_retired(ucc_tl_goring_context_t *ctx);

/* Converts a goring status to UCC's. */
ucc_status_t ucc_tl_goring_status(goring_status_t st);

/* Logs goring's last error at error level, with what failed. */
void ucc_tl_goring_log_error(ucc_base_lib_t *lib, const char *what, goring_status_t st);

ucc_status_t ucc_tl_goring_coll_init(ucc_base_coll_args_t *coll_args,
                                     ucc_base_team_t *team, ucc_coll_task_t **task);

/* As ucc_tl_goring_coll_init, running algorithm alg (a name of
 * tl_goring_algs.h; NULL: the team's choice). */
ucc_status_t ucc_tl_goring_coll_init_alg(ucc_base_coll_args_t *coll_args, ucc_base_team_t *team,
                                         ucc_coll_task_t **task, const char *alg);

/* UCC's alg_fn: the init of the algorithm a TUNE string names by id or
 * name (tl_goring_algs.c). */
ucc_status_t ucc_tl_goring_alg_id_to_init(int alg_id, const char *alg_id_str,
                                          ucc_coll_type_t coll_type, ucc_memory_type_t mem_type,
                                          ucc_base_coll_init_fn_t *init);

#endif
