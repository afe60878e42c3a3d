// Package sched turns a collective call into data: one program per rank of
// send, recv, copy and reduce steps (goring.program/v1), and proves such
// programs correct.
//
// # From a spec to a plan
//
// A Spec names the collective, the algorithm, the topology, the message size
// (UCC's meaning: allgather counts each rank's contribution, allreduce the
// whole vector, reduce_scatter each rank's output block, bcast the message),
// the element size, an optional chunk count, alltoallv counts and a bcast
// root. Generate validates it and builds the Plan:
//
//	plan, err := sched.Generate(sched.Spec{
//		Collective: coll.Allgather, Algorithm: "ring",
//		Topo: t, Bytes: 1 << 20, DtypeBytes: 4,
//	})
//
// Every rank computes the same plan from the same spec, so plans need no
// communication. A real rank only needs its own program: GenerateRank builds
// just that (in O(its steps) for the baselines, which generate one rank at
// a time through Algorithm.Rank).
//
// A spec names its algorithm: which one goring runs where the caller names
// none ("auto") is package choose's answer, not sched's. GenerateFirst
// takes the first of several names that does not return an
// *UnsupportedError (choose gives it its choice and the fallback);
// Plan.Note says which and why the others were skipped. An algorithm
// returns an UnsupportedError when it cannot serve a spec: neighbor
// exchange needs an even rank count, recursive doubling a power of two,
// the hierarchical ones equal nodes.
//
// # Programs
//
// A RankProgram is a list of Steps in id order; a step starts when the
// steps it depends on (same rank, earlier ids only, so programs are acyclic
// by construction) completed. A send matches the recv on the peer with the
// same (sender, receiver, tag); several such pairs match in step order.
// Each rank has three buffers: src (the caller's input, never written), dst
// (the caller's output) and scratch (library memory, sized by the
// generator in Sizes.Scratch). Layouts: allgather dst holds block j at
// j*Bytes; reduce_scatter src holds P blocks of Bytes; alltoallv src is
// packed by destination and dst by source, displacements being prefix sums
// of Counts (AlltoallvDispls); bcast every rank has src and dst of Bytes.
//
// Every generator adds its steps one way (steps.go): prog.Send, Recv, Copy
// and Reduce, each with the ids of the steps it waits for, a negative id
// standing for none. A generator may write the same verbs on a Hazards
// over the program instead, which adds exactly the dependencies that make
// the program race-free, so that it can emit steps in program order and
// give only the ordering its algorithm wants on top (lock-stepped rounds,
// for instance). Generators share a few helpers so a block means the same
// bytes everywhere: BlockSpan splits a message into blocks of whole
// elements as even as elements allow (never splitting an element, so any
// size of at least one element works); ChunkCount, ChunkSpan and ChunkTag
// split a transfer into pipelined pieces when Spec.Chunks > 1.
//
// # Verification
//
// Verify executes a plan symbolically. It checks the structure, matches
// every send with exactly one recv of the same length, simulates completion
// with rendezvous transfers (a transfer completes only when both sides are
// posted, and the sends or recvs of one rank with the same peer and tag are
// posted in step order, as the executor posts them; a plan that cannot
// finish is reported as a deadlock naming the stuck steps of each rank),
// checks that steps of one rank that may run at
// once never write the same bytes or read bytes the other writes, and
// replays the completion order over symbolic buffers. Contents are interval
// maps from byte ranges to (set of contributing ranks, origin offset), so a
// reduction is proved to combine the same element of every rank exactly
// once and a 64-rank, 64 MiB plan verifies in milliseconds. The Report
// counts steps, transfers and bytes per rank and the critical path: the
// longest chain of transfers through dependencies and matching, in all
// transfers and in inter-node transfers (P-1 for the flat ring, nodes-1 for
// parallel rings: the Parallel Rings paper's step count).
//
// # JSON
//
// WriteProgram streams a plan as goring.program/v1 (docs/contracts.md "Program
// JSON"), one line per step; ParseProgram reads one back strictly. The
// simulator, the executor and the verifier all consume this one structure.
//
// # Algorithms
//
// One file per algorithm (alg_*.go), each registered in init with the
// paper section it implements: allgather ring, neighbor,
// recursive_doubling, bruck (the baselines of Parallel Rings section II)
// and parallel_rings (Parallel Rings Algorithms 1 and 2); reduce_scatter
// ring and parallel_rings (Parallel Rings section V-A); allreduce ring
// (Multi-lane Algorithm 1), rabenseifner, lane (Multi-lane Algorithm 2),
// recursive_doubling and parallel_rings; alltoallv pairwise and nimble
// (NIMBLE section IV); bcast knomial; allgather and bcast multiwrite (the
// MultiWrite paper's relay multicast, planned by multiwrite.go, which also
// builds the grouped TP=4 allgather that VerifyMulticast checks). The
// intra-node phase of parallel_rings has a table of its own (intra.go,
// Spec.Intra), one file per variant (intra_*.go). `goring plan` prints any
// of them, verifies it and draws it.
//
// # Scratch memory
//
// Sizes.Scratch is what the runtime allocates per rank, once per plan. Its
// bound per algorithm (B = Spec.Bytes, P ranks = N nodes x G GPUs, e the
// element size, blk(k) = the largest of k element-aligned blocks of B,
// about B/k; scratch_test.go checks every plan against these):
//
//	allgather (all), alltoallv pairwise,  0: everything lands in dst
//	bcast knomial, allreduce ring,        (multiwrite relays forward from
//	bcast multiwrite                      their own dst, MultiWrite 6.4)
//	allreduce rabenseifner,               B: one half-vector per round
//	  recursive_doubling
//	allreduce leader                      min(P-1, 2) B at rank 0: two
//	                                      slots the inputs take in turn
//	allreduce lane                        (G-1+[N>1]) blk(G) < 2B: G-1 intra
//	                                      receives, one inter-node ring slot
//	allreduce parallel_rings              min(2,N) (G-1+2[N>1]) (blk(NG) +
//	                                      Chunks e) <= 1.5B + slack: two slot
//	                                      sets alternate between rings
//	reduce_scatter ring                   2B (P > 2): two alternating slots
//	reduce_scatter parallel_rings         min(2,N) (G-1+2[N>1]) B
//	reduce_scatter leader                 (1+min(P-1,2)) P B at rank 0: an
//	                                      accumulator and two input slots
//	alltoallv nimble                      2 pools x 4 slots x 4 MiB = 32 MiB
//	                                      at most, whatever it relays; 0
//	                                      when nothing is split
//
// Nothing grows with the iteration count, and no scratch exceeds twice the
// message except reduce_scatter's, whose B is one rank's output block of a
// P-times larger input.
package sched
