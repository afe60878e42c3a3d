package exec

import "time"

// Timing that Go and the C executor share. cexec's C code reads these
// from cexec/constants.h, which is generated from them and checked
// against them by
//
//	go test ./cexec -run ConstantsHeader [-update-constants]
//
// so each figure is written once, here.

// WatchEvery is how often a waiting collective checks that the processes
// of its peers still run: a dead peer is reported within this time, and a
// check costs microseconds. The team layer's peer watch (Watch.Every) and
// cexec's calls (gx_call_test reports GX_WATCH) keep it.
const WatchEvery = 500 * time.Millisecond

// CancelWait bounds how long a failed call, having cancelled what UCX
// still holds, progresses the worker until UCX has let go of the buffers
// (ucx_mp's Transport.Cancel, cexec's gx_call_fail); a request UCX never
// completes is left to it after this.
const CancelWait = 2 * time.Second
