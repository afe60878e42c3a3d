/* tl_goring_retire.c: the list of tl_goring_retire.h. */
#include "tl_goring_retire.h"

#include <string.h>

void tl_goring_retired_init(tl_goring_retired_t *r)
{
    pthread_mutex_init(&r->lock, NULL);
    r->count = 0;
}

void tl_goring_retired_cleanup(tl_goring_retired_t *r)
{
    pthread_mutex_destroy(&r->lock);
}

int tl_goring_retire(tl_goring_retired_t *r, goring_team_h team)
{
    int kept;

    pthread_mutex_lock(&r->lock);
    kept = r->count < TL_GORING_RETIRED_MAX;
    if (kept) {
        r->teams[r->count++] = team;
    }
    pthread_mutex_unlock(&r->lock);
    return kept;
}

unsigned tl_goring_retired_take(tl_goring_retired_t *r, goring_team_h *out)
{
    unsigned n;

    pthread_mutex_lock(&r->lock);
    n = r->count;
    memcpy(out, r->teams, n * sizeof(*out));
    r->count = 0;
    pthread_mutex_unlock(&r->lock);
    return n;
}
