/* tl_goring_idle.c: the set of tl_goring_idle.h. */
#include "tl_goring_idle.h"

#include <stdlib.h>

void tl_goring_idle_init(tl_goring_idle_t *s)
{
    pthread_mutex_init(&s->lock, NULL);
    s->slots = NULL;
    s->cap = s->used = 0;
}

void tl_goring_idle_cleanup(tl_goring_idle_t *s)
{
    free(s->slots);
    s->slots = NULL;
    s->cap = s->used = 0;
    pthread_mutex_destroy(&s->lock);
}

/* mix is a 64-bit finaliser (xor-shift-multiply): every input bit moves
 * every output bit, so nearby rank lists land far apart. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t tl_goring_idle_key(const uint32_t *ctx_ranks, uint32_t size)
{
    uint64_t h = mix(size);

    for (uint32_t i = 0; i < size; i++) {
        h = mix(h ^ ((uint64_t)ctx_ranks[i] + 0x9e3779b97f4a7c15ULL));
    }
    return h != 0 ? h : 1;
}

/* find returns key's slot, or the empty slot where it would go. */
static uint64_t *find(uint64_t *slots, uint64_t cap, uint64_t key)
{
    for (uint64_t i = key & (cap - 1);; i = (i + 1) & (cap - 1)) {
        if (slots[i] == key || slots[i] == 0) {
            return &slots[i];
        }
    }
}

int tl_goring_idle_has(tl_goring_idle_t *s, uint64_t key)
{
    int found;

    pthread_mutex_lock(&s->lock);
    found = s->cap > 0 && *find(s->slots, s->cap, key) == key;
    pthread_mutex_unlock(&s->lock);
    return found;
}

void tl_goring_idle_add(tl_goring_idle_t *s, uint64_t key)
{
    uint64_t *slot;

    pthread_mutex_lock(&s->lock);
    if (2 * (s->used + 1) > s->cap) { /* keep it at most half full */
        uint64_t  cap   = s->cap ? 2 * s->cap : 64;
        uint64_t *slots = calloc(cap, sizeof(*slots));

        if (slots == NULL) {
            goto out;
        }
        for (uint64_t i = 0; i < s->cap; i++) {
            if (s->slots[i] != 0) {
                *find(slots, cap, s->slots[i]) = s->slots[i];
            }
        }
        free(s->slots);
        s->slots = slots;
        s->cap   = cap;
    }
    slot = find(s->slots, s->cap, key);
    if (*slot == 0) {
        *slot = key;
        s->used++;
    }
out:
    pthread_mutex_unlock(&s->lock);
}
