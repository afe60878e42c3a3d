// Package ucxmp is goring's data plane over UCX: it implements the
// executor's Transport (package exec) with UCP tag send and receive.
//
// The architecture calls this layer multi-path: one logical transfer split over
// the direct link, GPU-staged and host-staged paths (theta/k of Multi-path model),
// pipelined in chunks, relayed and forwarded. Host memory, and device
// memory of peers on other hosts, take one path: each send becomes one
// ucp_tag_send_nbx on the endpoint to the peer, each receive one
// ucp_tag_recv_nbx (ucx_transport.go). Device memory of peers on this
// host, when the transport has a DeviceEngine, is pushed by the sender
// into the receiver's buffer, UCX carrying only a clear-to-send and a done
// message (ipc.go); the engine receives the Post's sched.Path hint, which
// is where a split over several paths hooks in. Device memory that
// neither the engine nor UCX moves goes through host staging when a
// Stager is set (stage.go).
//
// # Rails
//
// Rails (rails.go) is a rank's data plane on a multi-rail cluster (the
// network-namespace testbed): a transport for the peers of its node and
// one per rail for the others, a message taking the sender's rail. With
// device buffers, goring bench gives the node's transport the engine and
// the rails' transports, which move host memory only, a Stager. Rails.Wait
// progresses every worker and sleeps in poll(2) on all their event fds,
// except while device work is in flight, which signals no fd.
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
