// Package ucx is goring's only binding to UCX's UCP layer (libucp): a
// context, workers, endpoints built from worker addresses, tag-matched
// send and receive with completion callbacks, progress, and a blocking
// Wait that sleeps on the worker's event fd so idle ranks use no CPU.
//
// # Loading
//
// libucp.so.0 is opened with dlopen at run time (shim.c) and called
// through function pointers typed from the UCX 1.13 headers, so goring
// builds with the headers alone, links only libc/libdl, and starts on a
// machine without UCX: plan, sim and topo never touch this package, and
// Load (called by Init) returns one line such as
//
//	libucp.so.0 not found (install libucx0: apt-get install libucx0): <dlerror>
//
// Only API present in UCX 1.13 is used (the *_nbx calls with
// ucp_request_param_t, field masks everywhere), so the same binary runs
// against 1.16 on the GPU machine. LD_LIBRARY_PATH selects another UCX
// build, for example a CUDA-enabled one.
//
// # Tutorial
//
// Each rank creates one context and one worker, publishes its worker
// address through the bootstrap, and connects an endpoint to every peer:
//
//	ctx, err := ucx.Init(ucx.Options{})                // tag, RMA, AM, wakeup
//	w, err := ctx.NewWorker(ucx.WorkerOptions{})       // thread mode serialized
//	addr, err := w.Address()                           // bytes for the bootstrap
//	// ... exchange addresses with the peers ...
//	ep, err := w.Connect(peerAddr, ucx.EndpointOptions{
//		OnError: func(err error) { /* peer gone: fail the job */ },
//	})
//
// Tags carry (sender rank, collective sequence, step tag); see Tag and
// MakeTag for the bit layout:
//
//	tag, err := ucx.MakeTag(myRank, seq%(ucx.MaxTagSeq+1), step.Tag)
//	sreq, err := ep.TagSend(buf, tag, func(c ucx.Completion) { ... })
//	rreq, err := w.TagRecv(dst, peerTag, ucx.MaskFull, func(c ucx.Completion) {
//		if c.Err != nil { ... }  // errors.Is(c.Err, ucx.ErrMessageTruncated), ...
//		// c.Length bytes are in dst; c.Tag is the matched tag
//	})
//
// Nothing moves until the worker is progressed. A rank runs one goroutine
// that owns the worker and loops:
//
//	for !finished {
//		if _, err := w.Wait(100 * time.Millisecond); err != nil { ... }
//		// callbacks ran inside Wait; post the next sends/receives here
//		// or from the callbacks themselves; check deadlines
//	}
//
// Progress is the non-blocking form (it returns how many completions it
// delivered). Wait first progresses; if nothing completed it arms the
// worker (ucp_worker_arm, progressing again on UCS_ERR_BUSY) and polls the
// event fd until UCX has work, the timeout passes, or another goroutine
// calls Signal. A loop that multiplexes other fds uses EventFD and Arm
// itself. Close endpoints (Endpoint.Close flushes; CloseNB posts the close
// and completes through the loop), then the worker, then the context.
//
// # Completions
//
// Every posted operation completes exactly once, on the goroutine running
// Progress or Wait: its Callback runs there (never inside C) and the
// Request records the result. UCX statuses, including immediate failures
// such as a send on a failed endpoint, arrive as Completion.Err; a post
// returns an error only when nothing was posted (closed worker, bad
// argument). C never holds a Go pointer: each operation carries an integer
// naming it in its worker's table as its user data; C callbacks append
// (handle, status, length, tag) to a queue in C memory that Go drains
// after each progress call, freeing the UCX request at that moment.
// No Go function is exported to C, so a Go panic never crosses into C.
//
// # Buffers
//
// UCX reads or writes a buffer after the call that posted it returns, so
// the memory must not move or be freed before the completion. Slices from
// the Go heap are pinned by the package (runtime.Pinner) for that time;
// Alloc returns page-aligned memory outside the Go heap (mmap), which is
// better for large buffers; TagSendAddr and TagRecvAddr take raw
// addresses (C or device memory) with a MemoryType, for the GPU work.
// Context.MemoryTypes says which memory types the loaded UCX can move.
//
// # Errors
//
// UCX status codes are Status values; errors.Is(err, ucx.ErrCanceled) and
// friends work through wrapping, and IsPeerFailure groups the codes of a
// dead or unreachable peer.
//
// # Transports and environment
//
// UCX reads UCX_* variables as usual; Options.Config overrides them per
// context (names without the prefix, {"TLS": "tcp"}). Two facts of UCX
// 1.13 shape the defaults:
//   - Endpoints use error handling mode "peer" unless
//     EndpointOptions.NoPeerErrors is set. In that mode 1.13 excludes the
//     shared-memory transports (they cannot report a dead peer), so two
//     ranks on one host talk over TCP (about 0.8 GB/s here against about
//     4 GB/s over posix/cma).
//   - With the wakeup feature, UCX's keepalive timer leaves the event fd
//     readable and Wait would spin, so Init sets UCX_KEEPALIVE_INTERVAL=inf
//     unless the caller or the environment sets it.
//
// Tests run two workers of one process over UCX's defaults; set UCX_TLS
// (for example UCX_TLS=self,sm,tcp or UCX_TLS=tcp) to choose transports,
// and UCX_WARN_UNUSED_ENV_VARS=n to silence UCX's note about unused
// variables. They skip, naming the reason, when libucp cannot be loaded.
package ucx
