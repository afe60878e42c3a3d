/*
 * tl_goring_gens.h: how many teams of one key and member list a context
 * has made.
 *
 * UCC reuses a freed team's key (its team id), so a new team may have the
 * key and the members of one whose messages are still in flight. goring's
 * team numbers them: the generation, which its first collective's card
 * exchange carries. Every member makes the same teams of a list, in the
 * same order (communicator creation is collective), so counting them at
 * creation, in C, gives every member the same number, whether or not Go
 * ever sees the team (a team is made in Go only when goring first has work
 * for it: tl_goring_team.c). For the same reason the count never forgets
 * a list (a tl_goring_counts table: 12 bytes per (key, member list) the
 * context has seen).
 */
#ifndef UCC_TL_GORING_GENS_H_
#define UCC_TL_GORING_GENS_H_

#include <stdint.h>

#include "tl_goring_counts.h"

typedef struct tl_goring_gens {
    tl_goring_counts_t teams; /* by (key, member list), one name of both */
} tl_goring_gens_t;

void tl_goring_gens_init(tl_goring_gens_t *g);
void tl_goring_gens_cleanup(tl_goring_gens_t *g);

/* Counts one more team of (key, members), members a tl_goring_idle_key,
 * and returns its generation (1 for the first); 0 where memory is short
 * (the team then fails: a member that skipped a count would disagree with
 * the others about every later team of the list). */
uint32_t tl_goring_gens_next(tl_goring_gens_t *g, uint32_t key, uint64_t members);

#endif
