//go:build ucc

// Command ucc_tl_goring is the Go side of goring's UCC team layer, built
// as a shared library (go build -buildmode=c-shared -tags ucc) that
// implements the C API of cshim/goring.h. The C shim in cshim/ registers
// the team layer "goring" with UCC and forwards each UCC entry point to
// one call here; this side knows nothing of UCC and the shim knows nothing
// of schedules.
//
// The objects follow UCC's:
//
//   - a context (goring_context_create) owns a UCX context and the options;
//     it has no worker;
//   - a team (goring_team_create) owns a UCX worker of its own (teams never
//     share a tag space; launch.RankWorker, as goring bench's ranks) and
//     publishes a card: the worker address, the host name and the process
//     (pid, start time), which the shim gathers over UCC's out-of-band
//     allgather. goring_team_connect then connects to every peer from the
//     gathered cards, maps ranks onto nodes by host (ranks of one host must
//     be contiguous and equally many for the hierarchical algorithms to see
//     nodes; otherwise the team is one flat node), and the team runs its
//     collectives one at a time in post order;
//   - a collective (goring_coll_init) is a per-rank program from package
//     sched for the UCC arguments, an exec.Machine over the caller's
//     buffers, and an exec.Call that goring_coll_test progresses without
//     ever blocking. A call has no deadline unless the user asks for one
//     (timeout_ms; the timeout policy is exec/deadline.go's); a dead peer
//     is found by its process (same host, watch.go) or by UCX (other
//     hosts).
//
// Two kinds of call run as a protocol of their own instead of a Machine:
// a leader algorithm on a GPU every rank shares (onedevice.go, package
// onedevice), and, with UCC_TL_GORING_CROSSMEM, a host allreduce or
// allgather of a one-host team by reading the peers' memory (crossmem.go,
// package crossmem). Both fall back to the Machine, on every rank alike,
// where they find they cannot run.
//
// Buffers may be host or CUDA device memory (gpu.go). Alltoallv, managed
// memory and anything else goring cannot run return
// GORING_ERR_NOT_SUPPORTED, which the shim turns into
// UCC_ERR_NOT_SUPPORTED so that UCC falls back to another team layer.
// Panics never cross into C: every exported function recovers and returns
// GORING_ERR_INTERNAL with the panic in goring_last_error.
//
// Build tag ucc keeps this package (a main package of exported C
// functions) out of plain builds; it needs no UCC itself: tests/capi runs
// the C API under mpirun without UCC.
package main

// main is required of a c-shared build and never runs.
func main() {}
