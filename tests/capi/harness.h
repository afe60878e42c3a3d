/*
 * harness.h: what the C API tests under mpirun share. A test defines
 * HARNESS_NAME (its name in messages) before including it, and gets its
 * rank, size and failure count, CHECK (count a failed condition and say
 * why), die_status (report a failed call and abort the job) and mpi_team
 * (a goring team over MPI_COMM_WORLD).
 */
#ifndef GORING_TESTS_HARNESS_H
#define GORING_TESTS_HARNESS_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "goring.h"

#ifndef HARNESS_NAME
#error "define HARNESS_NAME before including harness.h"
#endif

static int rank, size, failures;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, HARNESS_NAME ": rank %d: ", rank);                 \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static void die_status(const char *what, goring_status_t st)
{
    char msg[512];
    goring_last_error(msg, sizeof(msg));
    fprintf(stderr, HARNESS_NAME ": rank %d: %s: status %d: %s\n", rank, what, st, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* mpi_cards gathers every rank's card by MPI, as a framework's
 * out-of-band allgather would: lengths first (cards may differ), then the
 * cards padded to the longest, which *slot receives. card(arg, buf, len)
 * is goring_team_card's or goring_context_card's rule (buf NULL: the
 * length only). The caller frees the result. */
static inline char *mpi_cards(goring_status_t (*card)(uint64_t h, void *buf, size_t *len), uint64_t h,
                              size_t *slot, void (*die)(const char *what, goring_status_t st))
{
    size_t          len = 0;
    goring_status_t st  = card(h, NULL, &len);
    if (st != GORING_OK) die("card", st);
    uint64_t mine = len, longest = 0;
    MPI_Allreduce(&mine, &longest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    int   size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *own = calloc(1, longest), *all = calloc(size, longest);
    len       = longest;
    if ((st = card(h, own, &len)) != GORING_OK) die("card", st);
    MPI_Allgather(own, (int)longest, MPI_BYTE, all, (int)longest, MPI_BYTE, MPI_COMM_WORLD);
    free(own);
    *slot = longest;
    return all;
}

/* mpi_team makes the team of every rank of MPI_COMM_WORLD, its cards
 * gathered by MPI (mpi_cards). die reports a failed call and does not
 * return. */
static inline goring_team_h mpi_team(goring_context_h ctx, int rank, int size,
                                     void (*die)(const char *what, goring_status_t st))
{
    goring_team_h   team;
    goring_status_t st = goring_team_create(ctx, rank, size, &team);
    if (st != GORING_OK) die("team_create", st);
    size_t slot  = 0;
    char  *cards = mpi_cards(goring_team_card, team, &slot, die);
    if ((st = goring_team_connect(team, cards, slot)) != GORING_OK) die("team_connect", st);
    free(cards);
    return team;
}

#endif /* GORING_TESTS_HARNESS_H */
