/*
 * tl_goring_context.c: a UCC context of tl/goring is one goring context
 * (a UCX context of goring's own), configured from UCC_TL_GORING_*.
 */
#include "tl_goring.h"

#include <stdio.h>
#include <string.h>

/* options builds goring_context_create's "key=value;..." from the config;
 * a value with ';' could not be told apart from the next key, so it is
 * refused. */
static ucc_status_t options(const ucc_tl_goring_context_config_t *cfg, char *buf, size_t len)
{
    const struct {
        const char *key, *val;
    } kv[] = {{"tls", cfg->ucx_tls},
              {"alg_allgather", cfg->alg_allgather},
              {"alg_allreduce", cfg->alg_allreduce},
              {"alg_reduce_scatter", cfg->alg_reduce_scatter},
              {"alg_bcast", cfg->alg_bcast},
              {"alg_alltoallv", cfg->alg_alltoallv},
              {"timeout_ms", cfg->timeout_ms},
              {"ipc", cfg->ipc},
              {"lanes", cfg->lanes},
              {"calibration", cfg->calibration},
              {"claims", cfg->claims},
              {"keepawake", cfg->keepawake},
              {"cpath_max", cfg->cpath_max},
              {"scores", cfg->scores},
              {"crossmem", cfg->crossmem},
              {"node_max", cfg->node_max},
              {"node_linger", cfg->node_linger},
              {"node_ll", cfg->node_ll}};
    size_t off = 0;
    int    n;

    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
        if (kv[i].val == NULL || kv[i].val[0] == '\0') {
            continue;
        }
        if (strchr(kv[i].val, ';') != NULL) {
            return UCC_ERR_INVALID_PARAM;
        }
        n = snprintf(buf + off, len - off, "%s=%s;", kv[i].key, kv[i].val);
        if (n < 0 || (size_t)n >= len - off) {
            return UCC_ERR_INVALID_PARAM;
        }
        off += (size_t)n;
    }
    return UCC_OK;
}

UCC_CLASS_INIT_FUNC(ucc_tl_goring_context_t, const ucc_base_context_params_t *params,
                    const ucc_base_config_t *config)
{
    const ucc_tl_goring_context_config_t *cfg =
        ucc_derived_of(config, ucc_tl_goring_context_config_t);
    char            opts[4096];
    goring_status_t st;
    ucc_status_t    status;

    UCC_CLASS_CALL_SUPER_INIT(ucc_tl_context_t, &cfg->super, params->context);
    self->tune_reported = 0;
    tl_goring_idle_init(&self->idle);
    tl_goring_memo_init(&self->memo);
    tl_goring_gens_init(&self->gens);
    tl_goring_retired_init(&self->retired);
    status = options(cfg, opts, sizeof(opts));
    if (status != UCC_OK) {
        tl_error(self->super.super.lib, "UCC_TL_GORING_* values too long or containing ';'");
        return status;
    }
    /* Tasks come from a pool whose objects are constructed once, as UCC's
     * own layers keep theirs: a calloc, construct and free per call cost
     * a small collective more than goring's C path itself. */
    status = ucc_mpool_init(&self->tasks, 0, sizeof(ucc_tl_goring_task_t), 0, UCC_CACHE_LINE_SIZE, 8,
                            UINT_MAX, &ucc_coll_task_mpool_ops, params->thread_mode,
                            "tl_goring_tasks");
    if (status != UCC_OK) {
        tl_error(self->super.super.lib, "failed to create the task pool");
        return status;
    }
    st = goring_context_create(opts, &self->handle);
    if (st != GORING_OK) {
        ucc_tl_goring_log_error(self->super.super.lib, "goring_context_create", st);
        ucc_mpool_cleanup(&self->tasks, 1);
        return ucc_tl_goring_status(st);
    }
    tl_debug(self->super.super.lib, "goring context created (options \"%s\")", opts);
    return UCC_OK;
}

UCC_CLASS_CLEANUP_FUNC(ucc_tl_goring_context_t)
{
    goring_status_t st;

    ucc_tl_goring_flush_retired(self);
    st = goring_context_destroy(self->handle);

    if (st != GORING_OK) {
        ucc_tl_goring_log_error(self->super.super.lib, "goring_context_destroy", st);
    }
    ucc_mpool_cleanup(&self->tasks, 1);
    tl_goring_idle_cleanup(&self->idle);
    tl_goring_memo_cleanup(&self->memo);
    tl_goring_gens_cleanup(&self->gens);
    tl_goring_retired_cleanup(&self->retired);
}

UCC_CLASS_DEFINE(ucc_tl_goring_context_t, ucc_tl_context_t);

/* goring's context address is its context card (goring_context_card):
 * UCC exchanges it with every other layer's, once per context, and a new
 * team reads its members' cards from there (tl_goring_team.c) instead of
 * exchanging anything itself. */
ucc_status_t ucc_tl_goring_get_context_attr(const ucc_base_context_t *context,
                                            ucc_base_ctx_attr_t *attr)
{
    const ucc_tl_goring_context_t *ctx  = ucc_derived_of(context, ucc_tl_goring_context_t);
    void                          *addr = attr->attr.ctx_addr; /* cleared below */
    size_t                         len  = 0;
    goring_status_t                st;

    ucc_base_ctx_attr_clear(attr);
    if (!(attr->attr.mask & (UCC_CONTEXT_ATTR_FIELD_CTX_ADDR_LEN | UCC_CONTEXT_ATTR_FIELD_CTX_ADDR))) {
        return UCC_OK;
    }
    if ((st = goring_context_card(ctx->handle, NULL, &len)) != GORING_OK) {
        ucc_tl_goring_log_error(context->lib, "goring_context_card", st);
        return ucc_tl_goring_status(st);
    }
    if (attr->attr.mask & UCC_CONTEXT_ATTR_FIELD_CTX_ADDR_LEN) {
        attr->attr.ctx_addr_len = len;
    }
    if ((attr->attr.mask & UCC_CONTEXT_ATTR_FIELD_CTX_ADDR) &&
        (st = goring_context_card(ctx->handle, addr, &len)) != GORING_OK) {
        ucc_tl_goring_log_error(context->lib, "goring_context_card", st);
        return ucc_tl_goring_status(st);
    }
    return UCC_OK;
}

/* Memory mapping (UCC's one-sided registration) is not goring's business. */
ucc_status_t ucc_tl_goring_mem_map(const ucc_base_context_t *context, ucc_mem_map_mode_t mode,
                                   ucc_mem_map_memh_t *memh, ucc_mem_map_tl_t *tl_h)
{
    (void)context, (void)mode, (void)memh, (void)tl_h;
    return UCC_ERR_NOT_SUPPORTED;
}

ucc_status_t ucc_tl_goring_mem_unmap(const ucc_base_context_t *context, ucc_mem_map_mode_t mode,
                                     ucc_mem_map_tl_t *tl_h)
{
    (void)context, (void)mode, (void)tl_h;
    return UCC_ERR_NOT_SUPPORTED;
}

ucc_status_t ucc_tl_goring_memh_pack(const ucc_base_context_t *context, ucc_mem_map_mode_t mode,
                                     ucc_mem_map_tl_t *tl_h, void **pack_buffer)
{
    (void)context, (void)mode, (void)tl_h, (void)pack_buffer;
    return UCC_ERR_NOT_SUPPORTED;
}
