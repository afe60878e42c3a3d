/*
 * tl_goring.c: the interface UCC finds (ucc_tl_goring), the config tables
 * and the lib object.
 */
#include "tl_goring.h"

#include <string.h>

static ucc_config_field_t ucc_tl_goring_lib_config_table[] = {
    {"", "", NULL, ucc_offsetof(ucc_tl_goring_lib_config_t, super),
     UCC_CONFIG_TYPE_TABLE(ucc_tl_lib_config_table)},
    {NULL}};

static ucc_config_field_t ucc_tl_goring_context_config_table[] = {
    {"", "", NULL, ucc_offsetof(ucc_tl_goring_context_config_t, super),
     UCC_CONFIG_TYPE_TABLE(ucc_tl_context_config_table)},
    {"UCX_TLS", "",
     "UCX transports of goring's own UCX workers (empty: UCX's default)",
     ucc_offsetof(ucc_tl_goring_context_config_t, ucx_tls), UCC_CONFIG_TYPE_STRING},
    {"ALG_ALLGATHER", "",
     "allgather algorithm (ucc_info -A lists them; auto or empty: goring's choice, choose.Auto)",
     ucc_offsetof(ucc_tl_goring_context_config_t, alg_allgather), UCC_CONFIG_TYPE_STRING},
    {"ALG_ALLREDUCE", "", "allreduce algorithm (as ALG_ALLGATHER)",
     ucc_offsetof(ucc_tl_goring_context_config_t, alg_allreduce), UCC_CONFIG_TYPE_STRING},
    {"ALG_REDUCE_SCATTER", "", "reduce_scatter algorithm (as ALG_ALLGATHER)",
     ucc_offsetof(ucc_tl_goring_context_config_t, alg_reduce_scatter), UCC_CONFIG_TYPE_STRING},
    {"ALG_BCAST", "", "bcast algorithm (as ALG_ALLGATHER)",
     ucc_offsetof(ucc_tl_goring_context_config_t, alg_bcast), UCC_CONFIG_TYPE_STRING},
    {"ALG_ALLTOALLV", "",
     "alltoallv and alltoall algorithm: pairwise (the default: needs only this rank's counts) or "
     "nimble (exchanges the count matrix before each call)",
     ucc_offsetof(ucc_tl_goring_context_config_t, alg_alltoallv), UCC_CONFIG_TYPE_STRING},
    {"TIMEOUT_MS", "inf",
     "deadline of one collective in milliseconds, an opt-in failure detector (inf: none; a late "
     "rank is waited for and a dead one on this host is detected by its process)",
     ucc_offsetof(ucc_tl_goring_context_config_t, timeout_ms), UCC_CONFIG_TYPE_STRING},
    {"IPC", "y",
     "CUDA buffers of ranks on one host: y, goring pushes them itself (CUDA IPC, UCX carries two "
     "small messages per transfer); n, through UCX's cuda_ipc. Every rank must say the same",
     ucc_offsetof(ucc_tl_goring_context_config_t, ipc), UCC_CONFIG_TYPE_STRING},
    {"LANES", "1",
     "UCX workers per rank (Multi-lane): each drives part of a host buffer through the same "
     "algorithm, 1 to 64, every host call on all of them; or auto: the rank's CPUs shared among "
     "its host's ranks, each host call on as many as pay for it. Every rank must say the same; "
     "device buffers run on one lane",
     ucc_offsetof(ucc_tl_goring_context_config_t, lanes), UCC_CONFIG_TYPE_STRING},
    {"CALIBRATION", "",
     "goring.calibration/v1 file (goring bench p2p --mem cuda --calibration-out: the paths as the "
     "push engine moves them; goring calibrate's one-process figures split too eagerly): with IPC, transfers between GPUs of "
     "this host are split over the paths it measured, for each step's load; a file that does not "
     "load or was measured on another machine fails the context (empty: never split)",
     ucc_offsetof(ucc_tl_goring_context_config_t, calibration), UCC_CONFIG_TYPE_STRING},
    {"CLAIMS", "",
     "goring.claims/v1 file (goring tune ucc: goring's times against UCC's GPU layers, measured "
     "through ucc_perftest on this machine): on the teams it fits (GPU name, team size, a GPU a "
     "rank or one shared), goring claims the CUDA sizes where it beat the layer UCC would "
     "otherwise run by this file instead of the tables shipped for H100 and H200 nodes; a file "
     "that does not load fails the context (empty: the shipped tables)",
     ucc_offsetof(ucc_tl_goring_context_config_t, claims), UCC_CONFIG_TYPE_STRING},
    {"KEEPAWAKE", "off",
     "keep goring's Go runtime awake between collectives (a duration up to 9ms, e.g. 5ms): a call "
     "after the application computed a while then does not wait for the runtime to wake (10-15 us "
     "less), at the price of the runtime's monitor polling, 6-18% of a core while collectives "
     "come; worth it where a core is idle (a rank per GPU), not on a fully subscribed node",
     ucc_offsetof(ucc_tl_goring_context_config_t, keepawake), UCC_CONFIG_TYPE_STRING},
    {"CPATH_MAX", "64K",
     "largest host-memory allgather, allreduce, reduce_scatter, bcast (bytes of the vector per "
     "rank) or alltoall (bytes a rank sends), K/M suffixes, that runs in goring's C executor once "
     "its plan is cached: no Go runtime on the call path, so small calls cost what UCX does (0: "
     "every call in Go)",
     ucc_offsetof(ucc_tl_goring_context_config_t, cpath_max), UCC_CONFIG_TYPE_STRING},
    {"SCORES", "model",
     "model: goring claims (score 11, above tl/ucp's 10) the collectives and sizes where its "
     "model predicts it faster than tl/ucp on the team (teams on one host; docs/ucc.md \"Default "
     "scores from the model\"); fixed: its default score (5) everywhere, so goring runs only "
     "where UCC_TL_GORING_TUNE asks",
     ucc_offsetof(ucc_tl_goring_context_config_t, scores), UCC_CONFIG_TYPE_STRING},
    {"CROSSMEM", "off",
     "host-memory allreduce and allgather of teams on one host by reading the peers' buffers "
     "(process_vm_readv: one kernel copy, no messages), each rank's part split over threads: off; "
     "auto, the rank's CPUs shared among its host's ranks (at most 4 threads), for the calls "
     "where it measured faster; or a thread count 1-16 for every such call above CPATH_MAX. "
     "A team whose ranks say different modes, or where the kernel refuses the reads, uses messages",
     ucc_offsetof(ucc_tl_goring_context_config_t, crossmem), UCC_CONFIG_TYPE_STRING},
    {"NODE_MAX", "64M",
     "CUDA allreduce, reduce_scatter, allgather and bcast of a team on one host, one GPU a rank, "
     "run as kernels the GPUs synchronise themselves (no host round trip per step), in slots of "
     "this many bytes (an allreduce's or a bcast's vector, a reduce_scatter's input, an "
     "allgather's output; a larger allreduce or reduce_scatter runs in pieces that fit); each GPU "
     "of such a team holds two slots. 0: off",
     ucc_offsetof(ucc_tl_goring_context_config_t, node_max), UCC_CONFIG_TYPE_STRING},
    {"NODE_LINGER", "50us",
     "how long a node kernel (NODE_MAX) of up to 16 CTAs stays on the GPU after its call, for "
     "the team's next call, which it then takes from host memory without a launch; it stays "
     "only while calls come back to back, and leaves at once for a call it cannot run. Work "
     "that waits for the whole device waits for it this long at most. off or 0: launch every "
     "call; at most 10ms",
     ucc_offsetof(ucc_tl_goring_context_config_t, node_linger), UCC_CONFIG_TYPE_STRING},
    {"NODE_LL", "off",
     "the largest node call (NODE_MAX), in bytes a rank sends each peer (an allreduce's vector, "
     "a reduce_scatter's output block, an allgather's input), whose data crosses in tagged "
     "lines that the receiving GPU uses as they land, with no flag to wait for: twice the bytes "
     "over NVLink. off or 0 (the default): slots and flags for every call; at most 512K",
     ucc_offsetof(ucc_tl_goring_context_config_t, node_ll), UCC_CONFIG_TYPE_STRING},
    {NULL}};

UCC_CLASS_INIT_FUNC(ucc_tl_goring_lib_t, const ucc_base_lib_params_t *params,
                    const ucc_base_config_t *config)
{
    const ucc_tl_goring_lib_config_t *cfg =
        ucc_derived_of(config, ucc_tl_goring_lib_config_t);

    (void)params;
    UCC_CLASS_CALL_SUPER_INIT(ucc_tl_lib_t, &ucc_tl_goring.super, &cfg->super);
    if (goring_api_version() != GORING_API_VERSION) {
        tl_error(&self->super, "libgoring implements API %d, this shim wants %d",
                 goring_api_version(), GORING_API_VERSION);
        return UCC_ERR_NOT_SUPPORTED;
    }
    return UCC_OK;
}

UCC_CLASS_CLEANUP_FUNC(ucc_tl_goring_lib_t) {}

UCC_CLASS_DEFINE(ucc_tl_goring_lib_t, ucc_tl_lib_t);

UCC_CLASS_DEFINE_NEW_FUNC(ucc_tl_goring_lib_t, ucc_base_lib_t,
                          const ucc_base_lib_params_t *, const ucc_base_config_t *);
UCC_CLASS_DEFINE_DELETE_FUNC(ucc_tl_goring_lib_t, ucc_base_lib_t);

static ucc_status_t ucc_tl_goring_get_lib_attr(const ucc_base_lib_t *lib,
                                               ucc_base_lib_attr_t *base_attr)
{
    ucc_tl_lib_attr_t *attr = ucc_derived_of(base_attr, ucc_tl_lib_attr_t);

    (void)lib;
    attr->super.flags            = 0;
    attr->super.attr.thread_mode = UCC_THREAD_MULTIPLE; /* the Go side locks */
    attr->super.attr.coll_types  = UCC_TL_GORING_SUPPORTED_COLLS;
    if (base_attr->mask & UCC_BASE_LIB_ATTR_FIELD_MIN_TEAM_SIZE) {
        attr->super.min_team_size = 2;
    }
    if (base_attr->mask & UCC_BASE_LIB_ATTR_FIELD_MAX_TEAM_SIZE) {
        attr->super.max_team_size = UCC_RANK_MAX;
    }
    return UCC_OK;
}

static ucc_status_t ucc_tl_goring_get_lib_properties(ucc_base_lib_properties_t *prop)
{
    prop->default_team_size = 2;
    prop->min_team_size     = 2;
    prop->max_team_size     = UCC_RANK_MAX;
    return UCC_OK;
}

ucc_status_t ucc_tl_goring_status(goring_status_t st)
{
    switch (st) {
    case GORING_OK:                return UCC_OK;
    case GORING_INPROGRESS:        return UCC_INPROGRESS;
    case GORING_ERR_NOT_SUPPORTED: return UCC_ERR_NOT_SUPPORTED;
    case GORING_ERR_DECLINED:      return UCC_ERR_NOT_SUPPORTED;
    case GORING_ERR_INVALID:       return UCC_ERR_INVALID_PARAM;
    case GORING_ERR_NO_MEMORY:     return UCC_ERR_NO_MEMORY;
    case GORING_ERR_NO_RESOURCE:   return UCC_ERR_NO_RESOURCE;
    case GORING_ERR_TIMEOUT:       return UCC_ERR_TIMED_OUT;
    default:                       return UCC_ERR_NO_MESSAGE;
    }
}

void ucc_tl_goring_log_error(ucc_base_lib_t *lib, const char *what, goring_status_t st)
{
    char msg[1024];

    goring_last_error(msg, sizeof(msg));
    tl_error(lib, "%s failed (status %d): %s", what, (int)st, msg);
}

/* Defined in tl_goring_context.c and tl_goring_team.c. */
UCC_CLASS_DEFINE_NEW_FUNC(ucc_tl_goring_context_t, ucc_base_context_t,
                          const ucc_base_context_params_t *, const ucc_base_config_t *);
UCC_CLASS_DEFINE_DELETE_FUNC(ucc_tl_goring_context_t, ucc_base_context_t);
UCC_CLASS_DEFINE_NEW_FUNC(ucc_tl_goring_team_t, ucc_base_team_t, ucc_base_context_t *,
                          const ucc_base_team_params_t *);
ucc_status_t ucc_tl_goring_get_context_attr(const ucc_base_context_t *context,
                                            ucc_base_ctx_attr_t *attr);
ucc_status_t ucc_tl_goring_mem_map(const ucc_base_context_t *context, ucc_mem_map_mode_t mode,
                                   ucc_mem_map_memh_t *memh, ucc_mem_map_tl_t *tl_h);
ucc_status_t ucc_tl_goring_mem_unmap(const ucc_base_context_t *context, ucc_mem_map_mode_t mode,
                                     ucc_mem_map_tl_t *tl_h);
ucc_status_t ucc_tl_goring_memh_pack(const ucc_base_context_t *context, ucc_mem_map_mode_t mode,
                                     ucc_mem_map_tl_t *tl_h, void **pack_buffer);
ucc_status_t ucc_tl_goring_team_create_test(ucc_base_team_t *tl_team);
ucc_status_t ucc_tl_goring_team_destroy(ucc_base_team_t *tl_team);
ucc_status_t ucc_tl_goring_team_get_scores(ucc_base_team_t *tl_team, ucc_coll_score_t **score);

UCC_TL_IFACE_DECLARE(goring, GORING);
