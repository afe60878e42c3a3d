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

#include <stdlib.h>
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

/* lazy_team makes the team from its members' context cards: UCC_OK,
 * UCC_ERR_NO_MESSAGE where goring declines the team, or
 * UCC_ERR_NOT_SUPPORTED where the out-of-band path must do. Where the
 * cards are the context's, nothing enters Go here: the team is made in Go
 * when goring first has work for it (ucc_tl_goring_team_go), which a team
 * goring runs nothing on never does. */
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

    /* A lazy team is told apart from the context's other teams by its key
     * (UCC's team id), both in the card exchange of its first call and in
     * the context path's tags. UCC numbers teams only where a layer asks
     * for ids (tl/ucp does, goring does not): without tl/ucp every team
     * has id 0, and two live teams of the same members would take each
     * other's messages. Such a team exchanges its cards out of band. */
    if (params->id == 0) {
        goto out;
    }
    if (cards == NULL || member_cards(ctx, params, cards, bounds, ranks, &self->members) != 0) {
        goto out;
    }
    if (self->members != 0 && !forced(&ctx->super.super) &&
        tl_goring_idle_has(&ctx->idle, self->members)) {
        status = UCC_ERR_NO_MESSAGE; /* declined before anything enters Go */
        goto out;
    }
    /* The team's key: UCC's team id, and the scope and scope id that tell
     * apart the teams one UCC team makes in several layers of a CL. */
    self->key  = ((uint32_t)params->id << 16) | ((uint32_t)(params->scope & 0xff) << 8) |
                 (uint32_t)(params->scope_id & 0xff);
    if (self->members != 0) {
        /* Counted now, made later: every member counts every team of the
         * list, made in Go or not (tl_goring_gens.h). */
        self->gen = tl_goring_gens_next(&ctx->gens, self->key, self->members);
        if (self->gen == 0) {
            status = UCC_ERR_NO_MEMORY;
            goto out;
        }
        self->member_cards  = cards; /* the team's until its cleanup */
        self->member_bounds = bounds;
        cards               = NULL;
        /* Its small host calls on the context's shared worker, where the
         * context has one and the key fits its tags (every member alike). */
        st = goring_cteam_create(ctx->handle, params->rank, params->size, self->key, ranks,
                                 self->members, self->member_cards, self->member_bounds, &self->ct);
        if (st != GORING_OK) {
            self->ct = NULL;
        }
        self->phase         = UCC_TL_GORING_TEAM_READY;
        status              = UCC_OK;
        goto out;
    }
    /* The team's own address storage: its member list is not the
     * context's, so Go counts the list's teams and sees each one now. */
    ucc_tl_goring_flush_retired(ctx); /* in the same stretch of Go */
    st = goring_team_create_lazy(ctx->handle, params->rank, params->size, self->key, 0, cards,
                                 bounds, &self->handle);
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

goring_status_t ucc_tl_goring_team_go(ucc_tl_goring_team_t *team)
{
    ucc_tl_goring_context_t *ctx = UCC_TL_GORING_TEAM_CTX(team);
    goring_status_t          st  = GORING_OK;

    pthread_mutex_lock(&team->go_lock);
    if (team->handle == 0 && team->member_cards != NULL) {
        ucc_tl_goring_flush_retired(ctx); /* in the same stretch of Go */
        st = goring_team_create_lazy(ctx->handle, UCC_TL_TEAM_RANK(team), UCC_TL_TEAM_SIZE(team),
                                     team->key, team->gen,
                                     team->member_cards, team->member_bounds, &team->handle);
        if (st != GORING_OK && st != GORING_ERR_NOT_SUPPORTED) {
            ucc_tl_goring_log_error(ctx->super.super.lib, "goring_team_create_lazy", st);
        }
    } else if (team->handle == 0) {
        st = GORING_ERR_NOT_SUPPORTED;
    }
    pthread_mutex_unlock(&team->go_lock);
    return st;
}

/* make_team is the team's creation after its fields are set: from the
 * context cards (lazy_team), or else by the out-of-band exchange that
 * create_test walks. */
static ucc_status_t make_team(ucc_tl_goring_team_t *self, ucc_tl_goring_context_t *ctx,
                              const ucc_base_team_params_t *params)
{
    ucc_base_context_t *tl_context = &ctx->super.super;
    goring_status_t     st;
    ucc_status_t        status;
    size_t              len = 0;

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
    ucc_tl_goring_flush_retired(ctx);
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

UCC_CLASS_INIT_FUNC(ucc_tl_goring_team_t, ucc_base_context_t *tl_context,
                    const ucc_base_team_params_t *params)
{
    ucc_tl_goring_context_t *ctx = ucc_derived_of(tl_context, ucc_tl_goring_context_t);
    ucc_status_t             status;

    UCC_CLASS_CALL_SUPER_INIT(ucc_tl_team_t, &ctx->super, params);
    self->handle        = 0;
    self->oob_req       = NULL;
    self->lens          = NULL;
    self->card          = NULL;
    self->cards         = NULL;
    self->members       = 0;
    self->gen           = 0;
    self->member_cards  = NULL;
    self->member_bounds = NULL;
    self->ct            = NULL;
    pthread_mutex_init(&self->go_lock, NULL);
    status = make_team(self, ctx, params);
    if (status != UCC_OK) {
        pthread_mutex_destroy(&self->go_lock); /* a failed init gets no cleanup call */
    }
    return status;
}

void ucc_tl_goring_flush_retired(ucc_tl_goring_context_t *ctx)
{
    goring_team_h   teams[TL_GORING_RETIRED_MAX];
    unsigned        n = tl_goring_retired_take(&ctx->retired, teams);
    goring_status_t st;

    for (unsigned i = 0; i < n; i++) {
        if ((st = goring_team_destroy(teams[i])) != GORING_OK) {
            ucc_tl_goring_log_error(ctx->super.super.lib, "goring_team_destroy", st);
        }
    }
}

UCC_CLASS_CLEANUP_FUNC(ucc_tl_goring_team_t)
{
    ucc_tl_goring_context_t *ctx = UCC_TL_GORING_TEAM_CTX(self);
    goring_status_t          st;

    if (self->oob_req != NULL) {
        self->oob.req_free(self->oob_req);
    }
    /* Destroyed with the context's next team, or now where the list of
     * those waiting is full (tl_goring_retire.h). */
    if (self->handle != 0 && !tl_goring_retire(&ctx->retired, self->handle)) {
        ucc_tl_goring_flush_retired(ctx);
        if ((st = goring_team_destroy(self->handle)) != GORING_OK) {
            ucc_tl_goring_log_error(ctx->super.super.lib, "goring_team_destroy", st);
        }
    }
    goring_cteam_destroy(self->ct); /* before the cards and ranks it reads */
    ucc_free(self->lens);
    ucc_free(self->card);
    ucc_free(self->cards);
    ucc_free(self->member_cards); /* bounds and ranks share its allocation */
    pthread_mutex_destroy(&self->go_lock);
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

/* team_model is goring's model on this team: the verdict of
 * goring_team_scores (GORING_OK, GORING_ERR_DECLINED, or an error), with
 * its score string and summary in *str and *summary (malloc'd, the caller
 * frees them; NULL on an error). The context's memo answers for a member
 * list Go has answered before (tl_goring_memo.h); otherwise the team is
 * made in Go, told the context's layers and asked. */
static goring_status_t team_model(ucc_tl_goring_team_t *team, char **str, char **summary)
{
    ucc_tl_goring_context_t *ctx = UCC_TL_GORING_TEAM_CTX(team);
    size_t                   len = 0, summary_len = 0;
    goring_status_t          st;

    st = tl_goring_memo_get(&ctx->memo, team->members, str, summary);
    if (st == GORING_OK || st == GORING_ERR_DECLINED) {
        return st;
    }
    if ((st = ucc_tl_goring_team_go(team)) != GORING_OK) {
        return st;
    }
    tell_layers(team);
    st = goring_team_scores(team->handle, NULL, &len, NULL, &summary_len);
    if (st == GORING_OK || st == GORING_ERR_DECLINED) {
        *str     = malloc(len);
        *summary = malloc(summary_len);
        st       = (*str == NULL || *summary == NULL)
                       ? GORING_ERR_NO_MEMORY
                       : goring_team_scores(team->handle, *str, &len, *summary, &summary_len);
    }
    if (st != GORING_OK && st != GORING_ERR_DECLINED) {
        free(*str);
        free(*summary);
        *str = *summary = NULL;
        return st;
    }
    tl_goring_memo_put(&ctx->memo, team->members, st, *str, *summary);
    return st;
}

/* model_scores raises score where goring's model (verdict, str and
 * summary from team_model) predicts goring faster than tl/ucp on this
 * team, and logs what the model found. A model that cannot answer leaves
 * the defaults: it never fails the team. */
static ucc_status_t model_scores(ucc_tl_goring_team_t *team, ucc_coll_score_team_info_t *info,
                                 ucc_coll_score_t *score, goring_status_t verdict, char *str,
                                 const char *summary)
{
    ucc_base_lib_t *lib    = UCC_TL_TEAM_LIB(team);
    ucc_status_t    status = UCC_OK;

    if (verdict != GORING_OK && verdict != GORING_ERR_DECLINED) {
        ucc_tl_goring_log_error(lib, "goring_team_scores", verdict);
        return UCC_OK; /* defaults stand */
    }
    tl_debug(lib, "goring's model on a team of %u ranks %s", UCC_TL_TEAM_SIZE(team), summary);
    if (verdict == GORING_ERR_DECLINED) {
        return UCC_OK; /* the model claims nothing: the defaults and the TUNE string decide */
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
    char                      *str = NULL, *summary = NULL;
    goring_status_t            verdict = team_model(team, &str, &summary);

    if (!forced(ctx) && verdict == GORING_ERR_DECLINED) {
        /* Nothing to offer: no entry in UCC's map, and no team of these
         * members again (tl_goring_idle.h). The model's line, as for a
         * team it claims on: this happens once per member list. */
        tl_debug(UCC_TL_TEAM_LIB(team), "goring's model on a team of %u ranks %s",
                 UCC_TL_TEAM_SIZE(team), summary);
        free(str);
        free(summary);
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
        goto out;
    }
    status = ucc_coll_score_build_default(tl_team, UCC_TL_GORING_DEFAULT_SCORE,
                                          ucc_tl_goring_coll_init,
                                          UCC_TL_GORING_SUPPORTED_COLLS &
                                              ~(uint64_t)UCC_TL_GORING_HOST_ONLY_COLLS,
                                          mts + 1, 1, &cuda);
    if (status != UCC_OK) {
        ucc_coll_score_free(score);
        goto out;
    }
    status = ucc_coll_score_merge_in(&score, cuda); /* frees both inputs; NULL on error */
    if (status != UCC_OK) {
        ucc_coll_score_free(score);
        goto out;
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
    status = model_scores(team, &info, score, verdict, str, summary);
    if (status != UCC_OK) {
        ucc_coll_score_free(score);
        goto out;
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
            goto out;
        }
    }
    *score_p = score;
    status   = UCC_OK;
out:
    free(str);
    free(summary);
    return status;
}
