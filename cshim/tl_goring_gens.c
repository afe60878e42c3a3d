/* tl_goring_gens.c: the counts of tl_goring_gens.h. */
#include "tl_goring_gens.h"

void tl_goring_gens_init(tl_goring_gens_t *g)
{
    tl_goring_counts_init(&g->teams);
}

void tl_goring_gens_cleanup(tl_goring_gens_t *g)
{
    tl_goring_counts_cleanup(&g->teams);
}

uint32_t tl_goring_gens_next(tl_goring_gens_t *g, uint32_t key, uint64_t members)
{
    /* One 64-bit name for the pair: members is already well mixed. */
    uint64_t k = members ^ ((uint64_t)key * 0x9e3779b97f4a7c15ULL);

    return tl_goring_counts_next(&g->teams, k != 0 ? k : 1);
}
