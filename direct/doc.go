// Package direct runs collectives of processes on one host by reaching
// into each other's buffers instead of sending the bytes as messages:
// one protocol (Call) with two backends, each a way of reaching the
// peers' buffers.
//
//   - Device (processes that share one GPU): rank 0, the leader, maps
//     every rank's source and result buffers into its own address space
//     (a Mapper: CUDA IPC in package cudaexec) and does every copy and
//     reduction of the collective itself, on its own stream, through
//     exec's LocalRun; the other ranks only say where their buffers are
//     and wait for the leader's word that their results are there.
//   - Host (host memory): every rank reads what it needs straight out of
//     its peers' buffers with one kernel copy (a Reader: Linux's
//     process_vm_readv in package crossread), its part split over the
//     Reader's threads (Reader.Run), and writes each reduced piece into
//     the peers' results while it is in cache.
//
// Why the device backend: processes on one GPU without MPS each have
// their own context, and the GPU runs one context at a time. Every step
// in which several processes put work on the GPU costs a turn of the GPU
// between them, 0.6-0.7 ms on an H100 (docs/gpu.md "One GPU in the
// simulator"), which is most of the time of a collective up to hundreds
// of MiB. With one context doing all the work there is no turn at all:
// the collective costs its bytes at the GPU's copy rate and a few
// launches.
//
// Why the host backend: an allreduce of messages on one host moves every
// block through a receive buffer before it reduces it, and once more for
// the allgather, and a 4-rank allreduce on a many-core host is then bound
// by memory, so more lanes do not help (docs/ucc.md "Lanes on a host with
// cores to spare"). Reading the peers' inputs directly, in pieces that
// stay in cache while they are reduced and written out, moves fewer bytes
// through memory and needs no second round for the allgather half;
// splitting each rank's part over threads uses the cores a rank has to
// spare: the Multi-lane paper's CPU workers (§3), each driving part of
// the buffer, without a UCX worker per thread.
//
// The algorithms (one file each):
//
//   - device: the leader algorithms of package sched (allreduce,
//     allgather, reduce_scatter and bcast "leader"), which say the same in
//     messages; here they are lists of copies and reductions over all
//     ranks' buffers (device_*.go), reduced in rank order so every rank
//     gets the bits of a serial loop. Where the executor runs
//     exec.MultiOps, one op reads several inputs once and writes several
//     results (fused kernels).
//   - host allreduce (host_allreduce.go): rank r reduces block r of every
//     rank's input into block r of its result, its own operand first and
//     then the peers' in rank order, and writes each reduced piece into
//     block r of every peer's result while the piece is in cache
//     (process_vm_writev). Every rank gets the same bits: each block is
//     reduced once.
//   - host allgather (host_allgather.go): rank r reads rank q's input into
//     block q of its result, for every q.
//
// The protocol of one call (small messages on the call's own tags, see
// exec.Transport). The working ranks are rank 0 on the device backend and
// every rank on the host's:
//
//  1. ARRIVE from every rank to every working rank: the lengths of its
//     source and result and the backend's names of them (the device's:
//     Mapper.Export's keys and offsets; the host's: the process's id,
//     the addresses, and where the team's cookie is), or why it cannot
//     take part. A working rank opens the peers' buffers from them (the
//     device maps them, cached by the Mapper). Ranks whose lengths
//     disagree fail the call.
//  2. VERDICT, on a host team's first call only: every rank reads every
//     peer's cookie (a random number in the peer's memory) and tells
//     every peer whether it could. A kernel that refuses cross-memory
//     access (Yama's ptrace_scope, a container's seccomp) or processes in
//     different pid namespaces (the id names another process) fail the
//     read or give another number. The team remembers the outcome
//     (Host.Verified). Reads and writes need the same permission, so the
//     read stands for both.
//  3. The work, above. In place it is safe: the leader reads every input
//     before it writes any result; on the host, rank q's block r is read
//     only by rank r, which writes it only after reading it.
//  4. DONE from every working rank to every rank once it has read and
//     written everything (the leader: once its last copy has finished on
//     the device). A rank's call completes when every working peer's DONE
//     has arrived: until then a peer may still be reading its buffers or
//     writing its result.
//
// Where the ranks cannot reach each other's buffers (a rank cannot export
// them or the leader cannot map them; a rank cannot read a peer) every
// rank ends the call alike with the backend's fallback error, nothing
// written: ErrUnmapped, ErrUnreadable. A verdict every rank reaches from
// the same messages (the host's ARRIVEs, the VERDICT round) needs no
// word; the leader's alone goes to the others in its DONE. The caller
// may then run the collective another way (the team layer runs sched's
// messages). Other failures fail the call, a working rank's DONE carrying
// the reason so that no rank waits for it; on the host a rank still
// waits for every working peer's DONE before it fails, since each may be
// reading or writing its buffers until then. Nothing waits forever: a late
// rank only delays the call (MPI lets ranks be late); a dead one is
// noticed by the Watch (or the deadline), as in exec.Call.
//
// Call is a state machine driven like exec.Call (Begin, then Progress
// with a zero wait from a progress function), so the team layer runs it
// in place of a Machine. The device's work is polled between messages
// (exec.LocalRun, as exec.Call polls a device); a host phase of reads
// runs to its end inside one Progress, on the Reader's threads. The package
// is pure Go: the device work goes through an exec.LocalExecutor and the
// mappings through a Mapper, which cudaexec implements for CUDA and
// exec/fakedev for the tests; the reads through a Reader, which package
// crossread implements with process_vm_readv, and the tests with
// in-process copies.
package direct
