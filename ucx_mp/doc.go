// Package ucxmp is goring's data plane over UCX: it implements the
// executor's Transport (package exec) with UCP tag send and receive.
//
// The architecture calls this layer multi-path: one logical transfer split over
// the direct link, GPU-staged and host-staged paths (theta/k of Multi-path model),
// pipelined in chunks, relayed and forwarded. Today it has one path, the
// direct one: each send becomes one ucp_tag_send_nbx on the endpoint to the
// peer, each receive one ucp_tag_recv_nbx (ucx_transport.go). The Post's
// sched.Path hint is where further paths will hook in; a transfer then
// becomes several UCX operations whose completions are merged back into
// the one Completion the executor expects.
//
// # Tags
//
// Every message carries ucx.MakeTag(sender, seq, step): the sending rank,
// the sequence number of the collective call (NextCall advances it; every
// rank calls collectives in the same order, so the numbers agree) and the
// program step's tag. A receive names its sender, so it matches with
// ucx.MaskFull: messages of different calls, or from different peers,
// never match each other, and UCX keeps posting order for equal tags, which
// is the program rule for repeated (peer, tag) pairs.
//
// # Waiting
//
// Wait progresses the worker and, when nothing completed, polls a little
// (SpinPolls) and then arms the worker and sleeps on its event fd until the
// deadline (ucx.Worker.Wait). So a rank waiting on a slow peer sleeps in
// the kernel instead of spinning, which matters when ranks outnumber cores.
//
// # Memory
//
// Buffers handed to PostSend/PostRecv should come from ucx.Alloc (outside
// the Go heap); the ucx package pins Go-heap buffers otherwise. A Transport
// is used by one goroutine at a time, like its worker.
package ucxmp
