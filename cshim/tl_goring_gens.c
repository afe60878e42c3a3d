/* tl_goring_gens.c: the counts of tl_goring_gens.h. */
#include "tl_goring_gens.h"

#include <stdlib.h>

void tl_goring_gens_init(tl_goring_gens_t *g)
{
    pthread_mutex_init(&g->lock, NULL);
    g->keys   = NULL;
    g->counts = NULL;
    g->cap = g->used = 0;
}

void tl_goring_gens_cleanup(tl_goring_gens_t *g)
{
    free(g->keys);
    free(g->counts);
    g->keys   = NULL;
    g->counts = NULL;
    g->cap = g->used = 0;
    pthread_mutex_destroy(&g->lock);
}

/* slot is k's index, or that of the empty slot where it would go. */
static uint64_t slot(const uint64_t *keys, uint64_t cap, uint64_t k)
{
    uint64_t i = k & (cap - 1);

    while (keys[i] != k && keys[i] != 0) {
        i = (i + 1) & (cap - 1);
    }
    return i;
}

/* grow doubles the table (the first has 64 slots); 0 on success. */
static int grow(tl_goring_gens_t *g)
{
    uint64_t  cap    = g->cap ? 2 * g->cap : 64;
    uint64_t *keys   = calloc(cap, sizeof(*keys));
    uint32_t *counts = calloc(cap, sizeof(*counts));

    if (keys == NULL || counts == NULL) {
        free(keys);
        free(counts);
        return -1;
    }
    for (uint64_t i = 0; i < g->cap; i++) {
        if (g->keys[i] != 0) {
            uint64_t j = slot(keys, cap, g->keys[i]);
            keys[j]    = g->keys[i];
            counts[j]  = g->counts[i];
        }
    }
    free(g->keys);
    free(g->counts);
    g->keys   = keys;
    g->counts = counts;
    g->cap    = cap;
    return 0;
}

uint32_t tl_goring_gens_next(tl_goring_gens_t *g, uint32_t key, uint64_t members)
{
    /* One 64-bit name for the pair: members is already well mixed. */
    uint64_t k = members ^ ((uint64_t)key * 0x9e3779b97f4a7c15ULL);
    uint32_t gen = 0;
    uint64_t i;

    k = k != 0 ? k : 1;
    pthread_mutex_lock(&g->lock);
    if (2 * (g->used + 1) > g->cap && grow(g) != 0) {
        goto out;
    }
    i = slot(g->keys, g->cap, k);
    if (g->keys[i] == 0) {
        g->keys[i] = k;
        g->used++;
    }
    gen = ++g->counts[i];
out:
    pthread_mutex_unlock(&g->lock);
    return gen;
}
