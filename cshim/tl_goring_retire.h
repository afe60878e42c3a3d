/*
 * tl_goring_retire.h: goring teams whose destruction waits for the next
 * entry into Go.
 *
 * UCC destroys a team when the application frees its communicator, often
 * after a stretch in C; destroying the goring team there would be one more
 * entry into the Go runtime at that moment, and each entry after a stretch
 * in C wakes the runtime's monitor (tl_goring_memo.h says what that
 * costs). So a freed team's handle waits here and is destroyed right
 * before the context's next team is made, in the same stretch of Go, or
 * when the context goes. A retired team holds its workers until then;
 * the next team's connection, which reuses them, comes after its
 * creation, so it finds them returned. A full list is destroyed at once.
 */
#ifndef UCC_TL_GORING_RETIRE_H_
#define UCC_TL_GORING_RETIRE_H_

#include <pthread.h>

#include "goring.h"

#define TL_GORING_RETIRED_MAX 8

typedef struct tl_goring_retired {
    pthread_mutex_t lock;
    goring_team_h   teams[TL_GORING_RETIRED_MAX];
    unsigned        count;
} tl_goring_retired_t;

void tl_goring_retired_init(tl_goring_retired_t *r);
void tl_goring_retired_cleanup(tl_goring_retired_t *r);

/* Adds team (not 0) and returns 1, or returns 0 where the list is full:
 * the caller then destroys the waiting teams and team at once. */
int tl_goring_retire(tl_goring_retired_t *r, goring_team_h team);

/* Takes every waiting team into out (room for TL_GORING_RETIRED_MAX) and
 * returns how many; the caller destroys them. */
unsigned tl_goring_retired_take(tl_goring_retired_t *r, goring_team_h *out);

#endif
