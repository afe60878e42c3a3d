/* tl_goring_counts.c: the counts of tl_goring_counts.h. */
#include "tl_goring_counts.h"

#include <stdlib.h>

void tl_goring_counts_init(tl_goring_counts_t *c)
{
    pthread_mutex_init(&c->lock, NULL);
    c->keys   = NULL;
    c->counts = NULL;
    c->cap = c->used = 0;
}

void tl_goring_counts_cleanup(tl_goring_counts_t *c)
{
    free(c->keys);
    free(c->counts);
    c->keys   = NULL;
    c->counts = NULL;
    c->cap = c->used = 0;
    pthread_mutex_destroy(&c->lock);
}

/* slot is key's index, or that of the empty slot where it would go. */
static uint64_t slot(const uint64_t *keys, uint64_t cap, uint64_t key)
{
    uint64_t i = key & (cap - 1);

    while (keys[i] != key && keys[i] != 0) {
        i = (i + 1) & (cap - 1);
    }
    return i;
}

/* grow doubles the table (the first has 64 slots); 0 on success. */
static int grow(tl_goring_counts_t *c)
{
    uint64_t  cap    = c->cap ? 2 * c->cap : 64;
    uint64_t *keys   = calloc(cap, sizeof(*keys));
    uint32_t *counts = calloc(cap, sizeof(*counts));

    if (keys == NULL || counts == NULL) {
        free(keys);
        free(counts);
        return -1;
    }
    for (uint64_t i = 0; i < c->cap; i++) {
        if (c->keys[i] != 0) {
            uint64_t j = slot(keys, cap, c->keys[i]);
            keys[j]    = c->keys[i];
            counts[j]  = c->counts[i];
        }
    }
    free(c->keys);
    free(c->counts);
    c->keys   = keys;
    c->counts = counts;
    c->cap    = cap;
    return 0;
}

uint32_t tl_goring_counts_get(tl_goring_counts_t *c, uint64_t key)
{
    uint32_t n = 0;

    pthread_mutex_lock(&c->lock);
    if (c->cap > 0) {
        n = c->counts[slot(c->keys, c->cap, key)]; /* 0 in an empty slot */
    }
    pthread_mutex_unlock(&c->lock);
    return n;
}

uint32_t tl_goring_counts_next(tl_goring_counts_t *c, uint64_t key)
{
    uint32_t n = 0;
    uint64_t i;

    pthread_mutex_lock(&c->lock);
    if (2 * (c->used + 1) > c->cap && grow(c) != 0) {
        goto out;
    }
    i = slot(c->keys, c->cap, key);
    if (c->keys[i] == 0) {
        c->keys[i] = key;
        c->used++;
    }
    n = ++c->counts[i];
out:
    pthread_mutex_unlock(&c->lock);
    return n;
}
