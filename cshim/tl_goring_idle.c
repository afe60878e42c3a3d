/* tl_goring_idle.c: the set of tl_goring_idle.h. */
#include "tl_goring_idle.h"

void tl_goring_idle_init(tl_goring_idle_t *s)
{
    tl_goring_counts_init(&s->lists);
}

void tl_goring_idle_cleanup(tl_goring_idle_t *s)
{
    tl_goring_counts_cleanup(&s->lists);
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

int tl_goring_idle_has(tl_goring_idle_t *s, uint64_t key)
{
    return tl_goring_counts_get(&s->lists, key) > 0;
}

void tl_goring_idle_add(tl_goring_idle_t *s, uint64_t key)
{
    if (!tl_goring_idle_has(s, key)) {
        (void)tl_goring_counts_next(&s->lists, key); /* no memory: not added */
    }
}
