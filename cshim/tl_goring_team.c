/*
 * tl_goring_team.c: a tl/goring team is one goring team. Where UCC holds
 * every member's goring context card (its context addresses: the usual
 * case), the team is made from those at once and communicates nothing
 * until goring runs a collective on it (goring_team_create_lazy).
 * A team on which goring's model claims nothing offers UCC no score, and
 * where no TUNE string names goring, the next team of the same members is
 * not made at all (tl_goring_idle.h).
 * Otherwise its creation is UCC's non-blocking create_post/create_test
 * pair: post makes the team's UCX worker and starts an out-of-band
 * allgather of the card lengths; test walks lengths -> cards -> connect,
 * never blocking.
 */
#include "tl_goring.h"

#include "coll_score/ucc_coll_score.h"
#include "core/ucc_context.h"
#include "core/ucc_team.h"
#include "utils/ucc_malloc.h"

#include <string.h>

/* member_cards points cards[r] at team rank r's goring context card in
 * UCC's address storage (the context's, or the team's where the context
 * had none), with bounds[r] the bytes readable there, and sets *members
 * to the member list's key (tl_goring_idle_key of the members' context
 * ranks, which ranks[] receives; 0 where the storage is the team's, whose
 * ranks are not the context's). It returns 0 when every
 * member has a card, -1 otherwise (no core team, no storage, or a member
 * without a goring context). */
static int member_cards(ucc_tl_goring_context_t *ctx, const ucc_base_team_params_t *params,
                        void **cards, size_t *bounds, uint32_t *ranks, uint64_t *members)
{
    ucc_context_t      *uctx = ctx->super.super.ucc_context;
    ucc_team_t         *core = params->team;
    ucc_addr_storage_t *st;
    int                 on_ctx;

    if (uctx == NULL || core == NULL) {
        return -1;
    }
    on_ctx = uctx->addr_storage.storage != NULL;
    st     = on_ctx ? &uctx->addr_storage : &core->addr_storage;
    if (st->storage == NULL) {
        return -1;
    }
    for (ucc_rank_t r = 0; r < params->size; r++) {
        ucc_rank_t                 core_rank = ucc_ep_map_eval(params->map, r);
        ucc_rank_t                 srank = on_ctx ? ucc_ep_map_eval(core->ctx_map, core_rank) : core_rank;
        ucc_context_addr_header_t *h     = UCC_ADDR_STORAGE_RANK_HEADER(st, srank);

        ranks[r] = srank;
        cards[r] = NULL;
        for (int i = 0; i < h->n_components; i++) {
            if (h->components[i].id == ucc_tl_goring.super.super.id &&
                (size_t)h->components[i].offset < st->addr_len) {
                cards[r]  = PTR_OFFSET(h, h->components[i].offset);
                bounds[r] = st->addr_len - (size_t)h->components[i].offset;
                break;
            }
        }
        if (cards[r] == NULL) {
            return -1;
        }
    }
    *members = on_ctx ? tl_goring_idle_key(ranks, params->size) : 0;
    return 0;
}

/* forced says whether the user's TUNE string names goring: then every
 * team is made and scored, whatever goring's model says. */
static int forced(ucc_base_context_t *ctx)
{
    return ctx->score_str != NULL && ctx->score_str[0] != '\0';
}

/* lazy_team makes the team from its members' context cards; UCC_OK,
 * UCC_ERR_NO_MESSAGE where goring declines the team, or
 * UCC_ERR_NOT_SUPPORTED where the out-of-band path must do. */
static ucc_status_t lazy_team(ucc_tl_goring_team_t *self, ucc_tl_goring_context_t *ctx,
                              const ucc_base_team_params_t *params)
{
    /* One allocation: the cards, their bounds, the members' context ranks. */
    size_t          each   = sizeof(void *) + sizeof(size_t) + sizeof(uint32_t);
    void          **cards  = ucc_malloc(each * params->size, "goring member cards");
    size_t         *bounds = (size_t *)(cards + params->size);
    uint32_t       *ranks  = (uint32_t *)(bounds + params->size);
    ucc_status_t    status = UCC_ERR_NOT_SUPPORTED;
    goring_status_t st;
    /* The team's key: UCC's team id, and the scope and scope id that tell
     * apart the teams one UCC team makes in several layers of a CL. */
    uint32_t key = ((uint32_t)params->id << 16) | ((uint32_t)(params->scope & 0xff) << 8) |
                   (uint32_t)(params->scope_id & 0xff);

    if (cards == NULL || member_cards(ctx, params, cards, bounds, ranks, &self->members) != 0) {
        goto out;
    }
    if (self->members != 0 && !forced(&ctx->super.super) &&
        tl_goring_idle_has(&ctx->idle, self->members)) {
        status = UCC_ERR_NO_MESSAGE; /* declined before anything enters Go */
        goto out;
    }
    st = goring_team_create_lazy(ctx->handle, params->rank, params->size, key, cards, bounds,
                                 &self->handle);
    if (st == GORING_OK) {
        self->phase = UCC_TL_GORING_TEAM_READY;
        status      = UCC_OK;
    } else if (st != GORING_ERR_NOT_SUPPORTED) {
        ucc_tl_goring_log_error(ctx->super.super.lib, "goring_team_create_lazy", st);
    }
out:
    ucc_free(cards);
    return status;
}

UCC_CLASS_INIT_FUNC(ucc_tl_goring_team_t, ucc_base_context_t *tl_context,
                    const ucc_base_team_params_t *params)
{
    ucc_tl_goring_context_t *ctx = ucc_derived_of(tl_context, ucc_tl_goring_context_t);
    goring_status_t          st;
    ucc_status_t             status;
    size_t                   len = 0;

    UCC_CLASS_CALL_SUPER_INIT(ucc_tl_team_t, &ctx->super, params);
    self->handle  = 0;
    self->oob_req = NULL;
    self->lens    = NULL;
    self->card    = NULL;
    self->cards   = NULL;
    self->members = 0;
    status = lazy_team(self, ctx, params);
    if (status == UCC_OK) {
        tl_debug(tl_context->lib, "goring team of %u ranks from the context cards", params->size);
        return UCC_OK;
    }
    if (status == UCC_ERR_NO_MESSAGE) {
        tl_debug(tl_context->lib, "no goring team of %u ranks: its model claimed nothing on "
                 "these members before", params->size);
        return UCC_ERR_NOT_SUPPORTED;
    }
    if (!(params->params.mask & UCC_TEAM_PARAM_FIELD_OOB)) {
        tl_debug(tl_context->lib, "team without an out-of-band allgather: not for goring");
        return UCC_ERR_NOT_SUPPORTED;
    }
    self->oob = params->params.oob;
    /* Cards land at each process's oob_ep; goring's ranks must be those. */
    if (self->oob.n_oob_eps != params->size || self->oob.oob_ep != params->rank) {
        tl_debug(tl_context->lib, "oob endpoints (%u of %u) differ from team ranks (%u of %u)",
                 self->oob.oob_ep, self->oob.n_oob_eps, params->rank, params->size);
        return UCC_ERR_NOT_SUPPORTED;
    }
    st = goring_team_create(ctx->handle, params->rank, params->size, &self->handle);
    if (st == GORING_OK) {
        st = goring_team_card(self->handle, NULL, &len);
    }
    if (st != GORING_OK) {
        ucc_tl_goring_log_error(tl_context->lib, "goring_team_create", st);
        return ucc_tl_goring_status(st);
    }
    self->my_len = len;
    self->lens   = ucc_malloc(sizeof(uint64_t) * params->size, "goring card lengths");
    if (self->lens == NULL) {
        status = UCC_ERR_NO_MEMORY;
        goto err;
    }
    self->phase = UCC_TL_GORING_TEAM_LENGTHS;
    status = self->oob.allgather(&self->my_len, self->lens, sizeof(uint64_t),
                                 self->oob.coll_info, &self->oob_req);
    if (status != UCC_OK) {
        tl_error(tl_context->lib, "out-of-band allgather of card lengths failed to start");
        goto err;
    }
    return UCC_OK;
err:
    /* A failed init gets no cleanup call: undo here. */
    goring_team_destroy(self->handle);
    ucc_free(self->lens);
    return status;
}

UCC_CLASS_CLEANUP_FUNC(ucc_tl_goring_team_t)
{
    goring_status_t st;

    if (self->oob_req != NULL) {
        self->oob.req_free(self->oob_req);
    }
    if (self->handle != 0 && (st = goring_team_destroy(self->handle)) != GORING_OK) {
        ucc_tl_goring_log_error(self->super.super.context->lib, "goring_team_destroy", st);
    }
    ucc_free(self->lens);
    ucc_free(self->card);
    ucc_free(self->cards);
}

UCC_CLASS_DEFINE_DELETE_FUNC(ucc_tl_goring_team_t, ucc_base_team_t);
UCC_CLASS_DEFINE(ucc_tl_goring_team_t, ucc_tl_team_t);

ucc_status_t ucc_tl_goring_team_destroy(ucc_base_team_t *tl_team)
{
    UCC_CLASS_DELETE_FUNC_NAME(ucc_tl_goring_team_t)(tl_team);
    return UCC_OK;
}

/* oob_done tests the allgather in flight: UCC_OK when it completed (and
 * is freed), UCC_INPROGRESS, or an error. */
static ucc_status_t oob_done(ucc_tl_goring_team_t *team)
{
    ucc_status_t status = team->oob.req_test(team->oob_req);

    if (status == UCC_INPROGRESS) {
        return status;
    }
    team->oob.req_free(team->oob_req);
    team->oob_req = NULL;
    return status;
}

ucc_status_t ucc_tl_goring_team_create_test(ucc_base_team_t *tl_team)
{
    ucc_tl_goring_team_t *team = ucc_derived_of(tl_team, ucc_tl_goring_team_t);
    ucc_base_lib_t       *lib  = tl_team->context->lib;
    ucc_rank_t            size = UCC_TL_TEAM_SIZE(team);
    goring_status_t       st;
    ucc_status_t          status;
    size_t                len;

    switch (team->phase) {
    case UCC_TL_GORING_TEAM_LENGTHS:
        if ((status = oob_done(team)) != UCC_OK) {
            return status;
        }
        team->slot = 0;
        for (ucc_rank_t r = 0; r < size; r++) {
            team->slot = team->lens[r] > team->slot ? team->lens[r] : team->slot;
        }
        team->card  = ucc_calloc(1, team->slot, "goring card");
        team->cards = ucc_calloc(size, team->slot, "goring cards");
        if (team->card == NULL || team->cards == NULL) {
            return UCC_ERR_NO_MEMORY;
        }
        len = team->slot;
        if ((st = goring_team_card(team->handle, team->card, &len)) != GORING_OK) {
            ucc_tl_goring_log_error(lib, "goring_team_card", st);
            return ucc_tl_goring_status(st);
        }
        status = team->oob.allgather(team->card, team->cards, team->slot,
                                     team->oob.coll_info, &team->oob_req);
        if (status != UCC_OK) {
            tl_error(lib, "out-of-band allgather of cards failed to start");
            return status;
        }
        team->phase = UCC_TL_GORING_TEAM_CARDS;
        return UCC_INPROGRESS;
    case UCC_TL_GORING_TEAM_CARDS:
        if ((status = oob_done(team)) != UCC_OK) {
            return status;
        }
        if ((st = goring_team_connect(team->handle, team->cards, team->slot)) != GORING_OK) {
            ucc_tl_goring_log_error(lib, "goring_team_connect", st);
            return ucc_tl_goring_status(st);
        }
        ucc_free(team->card);
        ucc_free(team->cards);
        team->card = team->cards = NULL;
        team->phase = UCC_TL_GORING_TEAM_READY;
        tl_debug(lib, "goring team of %u ranks connected", size);
        return UCC_OK;
    case UCC_TL_GORING_TEAM_READY:
        return UCC_OK;
    }
    return UCC_ERR_INVALID_PARAM;
}

/* tell_layers tells goring which team layers the UCC context has (its
 * claims by measurement count only those: goring_team_layers). */
static void tell_layers(ucc_tl_goring_team_t *team)
{
    ucc_context_t *uctx = UCC_TL_CORE_CTX(team);
    char           names[512];
    size_t         off = 0;
    int            n;

    names[0] = '\0';
    for (unsigned i = 0; uctx != NULL && i < uctx->all_tls.count; i++) {
        n = snprintf(names + off, sizeof(names) - off, "%s%s", off ? "," : "", uctx->all_tls.names[i]);
        if (n < 0 || (size_t)n >= sizeof(names) - off) {
            break; /* what fits: a layer left out is one not counted */
        }
        off += (size_t)n;
    }
    (void)goring_team_layers(team->handle, names);
}

/* model_scores raises score where goring's model predicts goring faster
 * than tl/ucp on this team (goring_team_scores), and logs what the model
 * found. A model that cannot answer leaves the defaults: it never fails
 * the team. */
static ucc_status_t model_scores(ucc_tl_goring_team_t *team, ucc_coll_score_team_info_t *info,
                                 ucc_coll_score_t *score)
{
    ucc_base_lib_t *lib = UCC_TL_TEAM_LIB(team);
    size_t          len = 0, summary_len = 0;
    char           *str = NULL, *summary = NULL;
    goring_status_t st;
    ucc_status_t    status = UCC_OK;

    st = goring_team_scores(team->handle, NULL, &len, NULL, &summary_len);
    if (st == GORING_OK || st == GORING_ERR_DECLINED) {
        str     = ucc_malloc(len, "goring model scores");
        summary = ucc_malloc(summary_len, "goring model summary");
        if (str == NULL || summary == NULL) {
            status = UCC_ERR_NO_MEMORY;
            goto out;
        }
        st = goring_team_scores(team->handle, str, &len, summary, &summary_len);
    }
    if (st != GORING_OK && st != GORING_ERR_DECLINED) {
        ucc_tl_goring_log_error(lib, "goring_team_scores", st);
        goto out; /* defaults stand */
    }
    tl_debug(lib, "goring's model on a team of %u ranks %s", UCC_TL_TEAM_SIZE(team), summary);
    if (st == GORING_ERR_DECLINED) {
        goto out; /* the model claims nothing: the defaults and the TUNE string decide */
    }
    /* Layers of scores separated by '|', applied in order: a later layer
     * overrides an earlier one where they overlap (UCC refuses overlapping
     * ranges within one string). */
    for (char *layer = str, *next; layer != NULL && status == UCC_OK; layer = next) {
        next = strchr(layer, '|');
        if (next != NULL) {
            *next++ = '\0';
        }
        if (layer[0] == '\0') {
            continue;
        }
        status = ucc_coll_score_update_from_str(layer, info, &team->super.super, score);
        if (status < 0) {
            tl_error(lib, "goring's scores \"%s\" were refused: %s", layer, ucc_status_string(status));
            status = UCC_OK; /* this layer's defaults stand; the next may apply */
        }
    }
out:
    ucc_free(str);
    ucc_free(summary);
    return status;
}

ucc_status_t ucc_tl_goring_team_get_scores(ucc_base_team_t *tl_team, ucc_coll_score_t **score_p)
{
    ucc_tl_goring_team_t      *team = ucc_derived_of(tl_team, ucc_tl_goring_team_t);
    ucc_base_context_t        *ctx  = UCC_TL_TEAM_CTX(team);
    /* CUDA memory is claimed too: a call goring cannot run on it (no
     * driver, a UCX without CUDA) is refused at init with
     * UCC_ERR_NOT_SUPPORTED and UCC takes the next layer. */
    ucc_memory_type_t          mts[] = {UCC_MEMORY_TYPE_HOST, UCC_MEMORY_TYPE_CUDA};
    const unsigned             nmts  = sizeof(mts) / sizeof(mts[0]);
    ucc_coll_score_team_info_t info;
    ucc_coll_score_t          *score, *cuda;
    ucc_status_t               status;

    size_t                     len = 0, summary_len = 0;

    tell_layers(team);
    if (!forced(ctx) &&
        goring_team_scores(team->handle, NULL, &len, NULL, &summary_len) == GORING_ERR_DECLINED) {
        /* Nothing to offer: no entry in UCC's map, and no team of these
         * members again (tl_goring_idle.h). The model's line, as for a
         * team it claims on: this happens once per member list. */
        char *str = ucc_malloc(len, "goring model scores");
        char *summary = ucc_malloc(summary_len, "goring model summary");

        if (str != NULL && summary != NULL &&
            goring_team_scores(team->handle, str, &len, summary, &summary_len) == GORING_ERR_DECLINED) {
            tl_debug(UCC_TL_TEAM_LIB(team), "goring's model on a team of %u ranks %s",
                     UCC_TL_TEAM_SIZE(team), summary);
        }
        ucc_free(str);
        ucc_free(summary);
        if (team->members != 0) {
            tl_goring_idle_add(&UCC_TL_GORING_TEAM_CTX(team)->idle, team->members);
        }
        return ucc_coll_score_alloc(score_p);
    }
    /* Host memory: every collective; CUDA memory: all but the host-only
     * ones (a TUNE string naming them may still add them). */
    status = ucc_coll_score_build_default(tl_team, UCC_TL_GORING_DEFAULT_SCORE,
                                          ucc_tl_goring_coll_init,
                                          UCC_TL_GORING_SUPPORTED_COLLS, mts, 1, &score);
    if (status != UCC_OK) {
        return status;
    }
    status = ucc_coll_score_build_default(tl_team, UCC_TL_GORING_DEFAULT_SCORE,
                                          ucc_tl_goring_coll_init,
                                          UCC_TL_GORING_SUPPORTED_COLLS &
                                              ~(uint64_t)UCC_TL_GORING_HOST_ONLY_COLLS,
                                          mts + 1, 1, &cuda);
    if (status != UCC_OK) {
        ucc_coll_score_free(score);
        return status;
    }
    status = ucc_coll_score_merge_in(&score, cuda); /* frees both inputs; NULL on error */
    if (status != UCC_OK) {
        ucc_coll_score_free(score);
        return status;
    }
    info.default_score       = UCC_TL_GORING_DEFAULT_SCORE;
    info.size                = UCC_TL_TEAM_SIZE(team);
    info.supported_colls     = UCC_TL_GORING_SUPPORTED_COLLS;
    info.supported_mem_types = mts;
    info.num_mem_types       = nmts;
    info.init                = ucc_tl_goring_coll_init;
    info.alg_fn              = ucc_tl_goring_alg_id_to_init; /* @name in a TUNE string */
    /* The sizes goring's model claims from tl/ucp, then the user's TUNE
     * string over them: a site's own choice wins. */
    status = model_scores(team, &info, score);
    if (status != UCC_OK) {
        ucc_coll_score_free(score);
        return status;
    }
    if (ctx->score_str != NULL && strlen(ctx->score_str) > 0) {
        status = ucc_coll_score_update_from_str(ctx->score_str, &info, tl_team, score);
        if (status == UCC_ERR_INVALID_PARAM) {
            /* UCC's parser says which token it could not read, not whose
             * variable held it: name it, once per context. The team goes
             * on with the scores goring computed. */
            ucc_tl_goring_context_t *gctx = ucc_derived_of(ctx, ucc_tl_goring_context_t);
            if (!gctx->tune_reported) {
                gctx->tune_reported = 1;
                tl_error(UCC_TL_TEAM_LIB(team),
                         "UCC_TL_GORING_TUNE=\"%s\" is not a TUNE string UCC can read "
                         "(tokens separated by '#', fields by ':', as "
                         "\"allreduce:host:0-64K:inf\"); goring keeps its own scores",
                         ctx->score_str);
            }
        } else if (status < 0 && status != UCC_ERR_NOT_SUPPORTED) {
            /* NOT_SUPPORTED: the string names what goring does not run. */
            ucc_coll_score_free(score);
            return status;
        }
    }
    *score_p = score;
    return UCC_OK;
}
