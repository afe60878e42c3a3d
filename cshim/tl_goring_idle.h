/*
 * tl_goring_idle.h: the member lists on which goring offers nothing.
 *
 * Where goring's model claims nothing on a team (GORING_ERR_DECLINED from
 * goring_team_scores) and no TUNE string names goring, being one more
 * layer of that team still costs every communicator: UCC creates, scores,
 * merges and destroys a goring team, and each entry into the Go runtime
 * after a stretch in C may wake it. So the context remembers the team's
 * member list (the members' ranks in the context, in team order) and the
 * next team of the same list is declined in C, before anything reaches
 * Go: UCC then runs that team on its other layers.
 *
 * Every member of a list sees the same teams of that list and scores them
 * alike (UCC's selection needs the same scores on every rank), so every
 * member declines the same teams; that keeps the members' numbering of a
 * team key's successive teams in step on the Go side, where a declined
 * team never arrives. For the same reason the set has no bound and never
 * forgets: a rank that forgot a list while its peers remember it would
 * make a team they decline. Lists are kept as 64-bit hashes in a
 * tl_goring_counts table; two lists of one hash would need about 2^32
 * distinct lists.
 */
#ifndef UCC_TL_GORING_IDLE_H_
#define UCC_TL_GORING_IDLE_H_

#include <stdint.h>

#include "tl_goring_counts.h"

/* A list is in the set when its count is above 0. */
typedef struct tl_goring_idle {
    tl_goring_counts_t lists;
} tl_goring_idle_t;

void tl_goring_idle_init(tl_goring_idle_t *s);
void tl_goring_idle_cleanup(tl_goring_idle_t *s);

/* The hash of a member list (never 0): ctx_ranks[i] is team rank i's rank
 * in the context. */
uint64_t tl_goring_idle_key(const uint32_t *ctx_ranks, uint32_t size);

int  tl_goring_idle_has(tl_goring_idle_t *s, uint64_t key);
/* Adds key; a set that cannot grow (no memory) stays as it was, which
 * only costs the next team of that list its creation. */
void tl_goring_idle_add(tl_goring_idle_t *s, uint64_t key);

#endif
