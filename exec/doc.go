// Package exec runs one rank's program (a sched.RankProgram) on real
// buffers. It is the data-moving twin of package sim: the same program, the
// same dependency rules, but bytes instead of predicted times.
//
// # A state machine, not a loop
//
// The executor is built like etcd-io/raft's node: a pure state machine that
// is told what happened and answers with what to do next. It never performs
// I/O, never blocks, never starts a goroutine and, once built, never
// allocates. Whoever owns the network (a UCX worker, the in-memory
// transport of the tests, a GPU driver later) owns the loop:
//
//	m, err := exec.New(prog, exec.HostBuffers(in, out, nil), exec.ConfigFor(plan, dtype, op))
//	err = m.Start()                 // queue the steps with no dependencies
//	for !m.Done() {
//		rd := m.Ready()             // receives and sends to post now
//		for i := range rd.Recvs { t.PostRecv(&rd.Recvs[i]) }
//		for i := range rd.Sends { t.PostSend(&rd.Sends[i]) }
//		comps, _ = t.Wait(deadline, comps[:0])
//		for _, c := range comps { err = m.Step(c) } // feed completions back
//	}
//
// Run is exactly this loop with deadlines, cancellation and error
// reporting; most callers use it and only implement Transport.
//
// Local steps (copy, reduce) never reach the caller: the Machine runs them
// as soon as they are ready, on the host by default, or hands them to a
// LocalExecutor (a GPU one starts a copy or a reduction kernel on a stream
// and reports its completion later, through the same Step call as network
// completions). A BatchLocal (cudaexec's: one copy-list kernel and one
// event) is handed every group of at least BatchMin copies that are ready
// together as one batch, named by its first step's token, whose one
// completion completes all of them; a BatchReduce that says so (cudaexec's:
// one reduce-list kernel) is handed such groups of reductions too (a batch
// is all copies or all reductions). Smaller groups, and the reductions of
// a BatchLocal that does not batch them, go one at a time. A batch goes
// over as a Batch: the step ids with the program and the buffers, not a
// LocalOp per step, so that handing over one of a large MoE call's
// thousands of batched steps costs the Machine a few stores and the
// executor two additions (Batch says why; BenchmarkMoEBatches measures
// it).
//
// # Memory types
//
// Buffers are Regions: a memory type (Mem: host, CUDA device N, or the
// tests' fake device), an address and a length, never a Go slice over
// device memory. Host regions keep their Go slice, so the host path is
// what it always was (copy() and package reduce, inline, no allocation).
// A Machine with any device buffer needs Config.Local, a LocalExecutor
// for that memory; an AsyncLocal one (package cudaexec's streams and
// events, package fakedev's fake) is polled by Call for finished steps, so
// device and network completions feed the same Step. Transports get the
// whole Post (Region and Path hint) and refuse, at post time and with the
// reason, memory they cannot move. Package exec/fakedev keeps device bytes
// apart from host bytes so that a host-only shortcut fails a test; every
// algorithm's contents test runs over it too.
//
// # What a step waits for
//
// A step becomes ready when every step in its Deps has completed. Sends and
// receives wait for one more thing: the previous send (receive) of the
// same peer and tag must have been posted. That keeps posts of one (peer,
// tag) in ascending step id, which is how the program JSON says pairs with
// the same (sender, receiver, tag) match, and it is the order a transport
// with per-endpoint FIFO tag matching (UCX, MPI) honours.
//
// New precomputes everything the steady state needs: for each step its
// dependency counter's start value, its dependents (a CSR array), the next
// step of its (op, peer, tag) chain, and batch slices at their final
// capacity. Start resets the counters with one copy. Tokens carry a call
// number (the epoch) and the step id, so completions of an earlier call
// that failed are recognised and ignored.
//
// # Safety
//
// New validates the program against the buffers before anything runs:
// every step's byte range lies inside the buffer it names, nothing writes
// the caller's src buffer, peers are ranks of the job, tags are
// non-negative, dependencies point to earlier steps, reduce steps cover
// whole, aligned elements of a dtype/op pair that exists (bitwise ops are
// rejected for float types). A receive that completes with any length
// other than the posted one fails its step; transports must report a
// longer message as an error rather than write past the buffer.
//
// Nothing hangs: Run gives every call a deadline (its argument, else the
// context's, else DefaultTimeout); Call takes a zero deadline as none, for
// a team layer where MPI lets a rank be late, and then relies on a Watch
// to find dead peers (deadline.go holds the policy). When a deadline
// passes or a Watch reports a dead peer, and one more poll of the
// transport brings nothing (a rank that was only late to poll takes what
// its peers sent meanwhile), the call returns a *StepError
// naming the rank, the collective and algorithm and the steps in flight
// (op, peer, tag, bytes), after cancelling them in the transport. The
// error wraps ErrDeadline, the context's error or the transport's error.
//
// # Scratch memory
//
// A program's scratch need is its Sizes.Scratch, computed by the generator
// from the algorithm and the message size; the executor allocates exactly
// that (8-byte aligned) once per Machine, or uses the caller's buffer, and
// reuses it for every call. It is never grown at run time: a step whose
// range does not fit is rejected by New.
//
// How much each algorithm needs is package sched's to say, as the owner of
// the layouts: its package comment ("Scratch memory") has the bound per
// algorithm, and sched's TestScratchWithinDocumentedBound holds every
// generator to it. TestScratchBounds here only keeps a coarse ceiling per
// algorithm from the executor's side.
//
// Package exec/reduce holds the host reduction kernels and the
// float16/bfloat16 conversions; package exec/memtransport is the in-memory
// Transport and the whole-job test harness (RunPlan).
package exec
