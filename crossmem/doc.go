// Package crossmem runs allreduce and allgather between processes of one
// host by reading each other's memory: each rank tells its peers where
// its buffers are, then reads what it needs straight out of their
// buffers with one kernel copy (Linux's process_vm_readv, through a
// Reader), on several threads. No byte travels as a message.
//
// Why: an allreduce of messages on one host moves every block through a
// receive buffer before it reduces it, and once more for the allgather,
// and a 4-rank allreduce on a many-core host is then bound by memory, so
// more lanes do not help (docs/ucc.md "Lanes on a host with cores to
// spare"). Reading the peers' inputs directly, in pieces that stay in
// cache while they are reduced and written out, moves fewer bytes through
// memory and needs no second round for the allgather half; splitting each
// rank's part over threads uses the cores a rank has to spare: the
// Multi-lane paper's CPU workers (§3), each driving part of the buffer,
// without a UCX worker per thread.
//
// The algorithms (one file each):
//
//   - allreduce (allreduce.go): rank r reduces block r of every rank's
//     input into block r of its result, its own operand first and then the
//     peers' in rank order, and writes each reduced piece into block r of
//     every peer's result while the piece is in cache (process_vm_writev).
//     Every rank gets the same bits: each block is reduced once.
//   - allgather (allgather.go): rank r reads rank q's input into block q
//     of its result, for every q.
//
// The protocol of one call (small messages on the call's own tags, as
// package onedevice's; every rank does the same):
//
//  1. ARRIVE to every peer: this process's id, the addresses and
//     lengths of the source and the result, and where the team's cookie
//     is. Ranks whose lengths disagree fail the call.
//  2. VERDICT, on a team's first call only: every rank reads every
//     peer's cookie (a random number in the peer's memory) and tells
//     every peer whether it could. A kernel that refuses cross-memory
//     access (Yama's ptrace_scope, a container's seccomp) or processes in
//     different pid namespaces (the id names another process) fail the
//     read or give another number; then every rank, having seen every
//     verdict, ends the call alike with ErrUnreadable, nothing written,
//     and the caller runs it another way (the team layer runs sched's
//     messages). The team remembers the outcome (Config.Verified). Reads
//     and writes need the same permission, so the read stands for both.
//  3. The work, above. In place it is safe: rank q's block r is read only
//     by rank r, which writes it only after reading it.
//  4. DONE to every peer once this rank has read and written everything.
//     The call completes when every peer's DONE has arrived: until then
//     a peer may still be reading this rank's buffers or writing its
//     result.
//
// A late rank only delays the call; a dead one is noticed by the Watch
// (or its read fails), as in exec.Call. Call is a state machine driven
// like exec.Call (Begin, then Progress); a phase of reads runs to its end
// inside one Progress, on the Pool's threads. The package is pure Go: the
// reads go through a Reader, which package crossread implements with
// process_vm_readv, and the tests with in-process copies.
package crossmem
