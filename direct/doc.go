// Package onedevice runs a collective of processes that share one GPU as
// the work of one of them: rank 0 (the leader) maps every rank's source
// and result buffers into its own address space and does every copy and
// reduction of the collective itself, on its own stream; the other ranks
// only say where their buffers are and wait for the leader's word that
// their results are there.
//
// Why: processes on one GPU without MPS each have their own context, and
// the GPU runs one context at a time. Every step in which several
// processes put work on the GPU costs a turn of the GPU between them,
// 0.6-0.7 ms on an H100 (docs/gpu.md "One GPU in the simulator"), which
// is most of the time of a collective up to hundreds of MiB. With one
// context doing all the work there is no turn at all: the collective
// costs its bytes at the GPU's copy rate and a few launches.
//
// The algorithms are the leader algorithms of package sched (allreduce,
// allgather, reduce_scatter and bcast "leader"), which say the same in
// messages; here they are lists of copies and reductions over all ranks'
// buffers (one file each), reduced in rank order so every rank gets the
// bits of a serial loop. Where the executor runs exec.MultiOps, one op
// reads several inputs once and writes several results (fused kernels).
//
// The protocol, for one call (tags are the call's own, see Transport):
//
//	rank r > 0: exports its buffers (Mapper.Export) and sends ARRIVE
//	            {keys, offsets, lengths} to rank 0; waits for FINISH
//	rank 0:     receives every ARRIVE, maps the buffers (Mapper.Map,
//	            cached by the mapper), runs the plan on its executor,
//	            then sends FINISH{ok} to every rank
//
// A rank's buffers are free again when its FINISH arrives: the leader
// sends it only after its last copy has finished on the device. When a
// rank cannot export or the leader cannot map, FINISH carries the reason
// to every rank and the call ends on all of them alike with ErrUnmapped,
// nothing written, so that the caller can run it another way (the team
// layer runs sched's message form); other failures fail the call. Nothing
// waits forever. A late rank only delays the call (MPI lets ranks be late); a
// dead one is noticed by the Watch, as in exec.Call.
//
// Call is a state machine driven like exec.Call (Begin, then Progress
// with a zero wait from a progress function), so the team layer runs it
// in place of a Machine. The package is pure Go: the device work goes
// through an exec.LocalExecutor and the mappings through a Mapper, which
// cudaexec implements for CUDA and exec/fakedev for the tests.
package onedevice
