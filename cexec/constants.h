/*
 * constants.h: the timing cexec's C code shares with Go, in microseconds.
 * Generated from the Go constants and checked against them by
 *     go test ./cexec -run ConstantsHeader [-update-constants]
 * so do not edit it by hand: change the Go constant and regenerate.
 */
#ifndef GORING_CEXEC_CONSTANTS_H
#define GORING_CEXEC_CONSTANTS_H

/* how long a call waits before its peers are checked (exec.WatchEvery) */
#define GX_WATCH_US 500000

/* how long a cancel waits for UCX to let go of buffers (exec.CancelWait) */
#define GX_CANCEL_US 2000000

#endif /* GORING_CEXEC_CONSTANTS_H */
