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

/* mpi_team makes the team of every rank of MPI_COMM_WORLD, its cards
 * gathered by MPI: lengths first (cards may differ), then the cards padded
 * to the longest. die reports a failed call and does not return. */
static inline goring_team_h mpi_team(goring_context_h ctx, int rank, int size,
                              void (*die)(const char *what, goring_status_t st))
{
    goring_team_h   team;
    goring_status_t st = goring_team_create(ctx, rank, size, &team);
    if (st != GORING_OK) die("team_create", st);
    size_t len = 0;
    if ((st = goring_team_card(team, NULL, &len)) != GORING_OK) die("team_card", st);
    uint64_t mine = len, longest = 0;
    MPI_Allreduce(&mine, &longest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    char *card = calloc(1, longest), *cards = calloc(size, longest);
    len = longest;
    if ((st = goring_team_card(team, card, &len)) != GORING_OK) die("team_card", st);
    MPI_Allgather(card, (int)longest, MPI_BYTE, cards, (int)longest, MPI_BYTE, MPI_COMM_WORLD);
    if ((st = goring_team_connect(team, cards, longest)) != GORING_OK) die("team_connect", st);
    free(card);
    free(cards);
    return team;
}

#endif /* GORING_TESTS_HARNESS_H */
