/*
 * mpi_team.h: a goring team over MPI_COMM_WORLD for the C API tests, its
 * cards gathered by MPI: lengths first (cards may differ), then the cards
 * padded to the longest. die reports a failed call and does not return.
 */
#ifndef GORING_TESTS_MPI_TEAM_H
#define GORING_TESTS_MPI_TEAM_H

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

#include "goring.h"

static goring_team_h mpi_team(goring_context_h ctx, int rank, int size,
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

#endif
