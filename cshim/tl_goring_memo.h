/*
 * tl_goring_memo.h: what goring's model said of a member list, kept in C.
 *
 * Every entry into the Go runtime after a stretch in C costs more than the
 * Go code it runs: the runtime's monitor wakes, and on a node where ranks
 * share cores that wake-up takes a core from a rank (measured in
 * docs/ucc.md, "What a team costs"). An application that makes and frees
 * communicators over the same processes again and again would pay it for
 * every team's scores. The model's answer depends only on the context
 * (its options, its layers, its calibration) and the members (where each
 * runs), so the context keeps the answer per member list
 * (tl_goring_idle_key) and the next team of those members reads it here.
 *
 * The memo is small and forgets (the oldest entry makes room): a list it
 * forgot is asked of Go again, which answers the same.
 */
#ifndef UCC_TL_GORING_MEMO_H_
#define UCC_TL_GORING_MEMO_H_

#include <pthread.h>
#include <stdint.h>

#include "goring.h"

#define TL_GORING_MEMO_SLOTS 16

typedef struct tl_goring_memo_entry {
    uint64_t        members; /* 0: empty */
    goring_status_t verdict; /* GORING_OK or GORING_ERR_DECLINED */
    char           *scores;  /* goring_team_scores' string and summary */
    char           *summary;
} tl_goring_memo_entry_t;

typedef struct tl_goring_memo {
    pthread_mutex_t        lock;
    tl_goring_memo_entry_t slots[TL_GORING_MEMO_SLOTS];
    unsigned               next; /* the slot the next new list takes */
} tl_goring_memo_t;

void tl_goring_memo_init(tl_goring_memo_t *m);
void tl_goring_memo_cleanup(tl_goring_memo_t *m);

/* Copies the answer kept for members into *scores and *summary (malloc'd:
 * the caller frees both) and returns its verdict; returns GORING_ERR_NOT_SUPPORTED
 * where members (or 0, no list) has none or the copies cannot be made. */
goring_status_t tl_goring_memo_get(tl_goring_memo_t *m, uint64_t members, char **scores,
                                   char **summary);

/* Keeps verdict, scores and summary for members (copies; nothing where
 * members is 0 or memory is short: the next team then asks Go). */
void tl_goring_memo_put(tl_goring_memo_t *m, uint64_t members, goring_status_t verdict,
                        const char *scores, const char *summary);

#endif
