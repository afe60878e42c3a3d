/* tl_goring_memo.c: the memo of tl_goring_memo.h. */
#include "tl_goring_memo.h"

#include <stdlib.h>
#include <string.h>

void tl_goring_memo_init(tl_goring_memo_t *m)
{
    pthread_mutex_init(&m->lock, NULL);
    memset(m->slots, 0, sizeof(m->slots));
    m->next = 0;
}

static void clear(tl_goring_memo_entry_t *e)
{
    free(e->scores);
    free(e->summary);
    memset(e, 0, sizeof(*e));
}

void tl_goring_memo_cleanup(tl_goring_memo_t *m)
{
    for (unsigned i = 0; i < TL_GORING_MEMO_SLOTS; i++) {
        clear(&m->slots[i]);
    }
    pthread_mutex_destroy(&m->lock);
}

static tl_goring_memo_entry_t *lookup(tl_goring_memo_t *m, uint64_t members)
{
    for (unsigned i = 0; i < TL_GORING_MEMO_SLOTS; i++) {
        if (m->slots[i].members == members) {
            return &m->slots[i];
        }
    }
    return NULL;
}

goring_status_t tl_goring_memo_get(tl_goring_memo_t *m, uint64_t members, char **scores,
                                   char **summary)
{
    goring_status_t         verdict = GORING_ERR_NOT_SUPPORTED;
    tl_goring_memo_entry_t *e;

    *scores = *summary = NULL;
    if (members == 0) {
        return verdict;
    }
    pthread_mutex_lock(&m->lock);
    if ((e = lookup(m, members)) != NULL) {
        *scores  = strdup(e->scores);
        *summary = strdup(e->summary);
        verdict  = e->verdict;
    }
    pthread_mutex_unlock(&m->lock);
    if (verdict != GORING_ERR_NOT_SUPPORTED && (*scores == NULL || *summary == NULL)) {
        free(*scores);
        free(*summary);
        *scores = *summary = NULL;
        verdict = GORING_ERR_NOT_SUPPORTED;
    }
    return verdict;
}

void tl_goring_memo_put(tl_goring_memo_t *m, uint64_t members, goring_status_t verdict,
                        const char *scores, const char *summary)
{
    char                   *s, *y;
    tl_goring_memo_entry_t *e;

    if (members == 0 || (s = strdup(scores)) == NULL) {
        return;
    }
    if ((y = strdup(summary)) == NULL) {
        free(s);
        return;
    }
    pthread_mutex_lock(&m->lock);
    if ((e = lookup(m, members)) == NULL) {
        e = &m->slots[m->next];
        m->next = (m->next + 1) % TL_GORING_MEMO_SLOTS;
    }
    clear(e);
    e->members = members;
    e->verdict = verdict;
    e->scores  = s;
    e->summary = y;
    pthread_mutex_unlock(&m->lock);
}
