/*
 * tl_goring_counts.h: a count per 64-bit key that a context never forgets,
 * under a lock. The idle set (tl_goring_idle.h: a member list is in it
 * when its count is above 0) and the team generations (tl_goring_gens.h:
 * the count is the number of teams made) are both such counts, and both
 * must never forget (their headers say why). Open addressing, at most half
 * full, 12 bytes a key.
 */
#ifndef UCC_TL_GORING_COUNTS_H_
#define UCC_TL_GORING_COUNTS_H_

#include <pthread.h>
#include <stdint.h>

typedef struct tl_goring_counts {
    pthread_mutex_t lock;
    uint64_t       *keys;   /* 0 is an empty slot */
    uint32_t       *counts;
    uint64_t        cap;    /* a power of two, or 0 before the first key */
    uint64_t        used;
} tl_goring_counts_t;

void tl_goring_counts_init(tl_goring_counts_t *c);
void tl_goring_counts_cleanup(tl_goring_counts_t *c);

/* The count of key (not 0); 0 for a key never counted. */
uint32_t tl_goring_counts_get(tl_goring_counts_t *c, uint64_t key);

/* Counts key (not 0) once more and returns its new count; 0 where the
 * table cannot grow (no memory), which leaves it as it was. */
uint32_t tl_goring_counts_next(tl_goring_counts_t *c, uint64_t key);

#endif
