// Package devsync is the flag-and-epoch protocol by which the GPUs of one
// node synchronise each other inside a collective kernel, with no host
// round trip between steps. It is pure Go: no cgo, no I/O. It holds the
// protocol's rules and the algorithms as data (which step a rank's block
// runs, in which order, on which regions); cuda/kernels/node.cu is the
// device implementation of the same plans, and package devsync/cpumodel
// runs the plans on a CPU model of a weakly ordered memory to check them.
//
// This is goring's own design. The memory-ordering terms (release and
// acquire at system scope, fences, causality through a CTA barrier) are
// those of the PTX ISA's memory consistency model (PTX ISA 8.x/9.x,
// chapter "Memory Consistency Model", sections on release and acquire
// patterns and on the scopes .cta/.gpu/.sys).
//
// # Memory
//
// Every rank owns a symmetric scratch region (same layout on every rank;
// Layout) that every peer can load from and store to: device memory
// mapped to the peers (peer access, or IPC handles across processes). It
// holds flag words, the LL area, then two data slots. Peers write a
// rank's flag words; a rank only polls its own (local) flags.
//
// # Epochs
//
// Each call of a team carries an epoch: 1 for the team's first call, one
// more for every call after (Epoch.Next). A writer signals "my data of
// call e is in place" by storing e into the reader's flag word; a reader
// waits until the word is at least e (Satisfied). Because the epoch only
// grows, flags are never reset: a flag left at e-1 by the previous call
// can never satisfy a wait of call e, and there is no reset to race with
// a fast peer's next signal.
//
// # Ordering
//
// A writer stores its data, then performs a release at system scope (a
// fence, or the flag store itself as st.release.sys), then stores the flag.
// A reader loads the flag with acquire semantics at system scope (or a
// volatile load followed by a fence) and only then loads the data. Within
// a CTA, the threads that wrote the data meet at a barrier before one
// thread releases the flag, and the thread that acquired a flag meets the
// others at a barrier before they read; the barrier carries the order.
//
// # Slots and reuse
//
// A call of epoch e uses data slot e&1 (Parity). A rank overwrites slot p
// again only at call e+2, and it can only start call e+2 after it waited,
// in call e+1, for every peer's signal of e+1 — which each peer sent after
// it had finished reading call e. So double buffering by parity makes the
// end-of-call barrier unnecessary (each algorithm's plan file says which
// of its waits gives that guarantee). Bcast, where the readers never send
// anything to the root, gets it from a "ready" flag to the root instead.
// This needs every call of the team to advance the epoch by exactly one.
//
// # Blocks
//
// A kernel runs Blocks CTAs on every rank (the same number on every rank).
// Block b of every rank handles part b of every chunk (Part), stages it,
// signals with its own flag word (phase, b, rank) and waits only for the
// same block of its peers: blocks never wait for each other, and no
// grid-wide barrier is needed.
//
// # Abort
//
// Every wait also watches one abort word (host-mapped memory, so the host
// can set it while kernels spin). Zero means run; AbortWord(r) means rank
// r died. A wait that sees it set ends with an *AbortError naming the dead
// rank instead of spinning forever (Poll).
//
// # Completion
//
// The host learns that a call ended from the GPU itself, not from a
// stream event: every block, when it is done with the call (its last
// store made, or its wait ended by the abort word), meets its CTA at a
// barrier, and one thread releases the call's epoch at system scope into
// the block's own done word (host-mapped memory, one word per block:
// DoneBytes). The call has ended on this rank when the done word of every
// block of its last kernel holds its epoch (Ended): the release orders
// every store of the block, outputs included, before the word. This
// saves the host an event recorded behind the kernel (a second stream
// operation) and the driver query of every poll. A call in several kernels on one stream (pieces)
// needs the last kernel's words only: stream order ends the earlier ones
// first.
//
// # Tagged lines (LL)
//
// Small calls may skip flags altogether: the writer stores its data into
// the reader's LL area in lines that carry the call's tag beside every 4
// data bytes, and the reader uses a line once it holds the tag (ll.go,
// the LL algorithms' plans). Reuse of the LL area follows from the same
// order of calls as the slots'.
//
// # Resident kernels
//
// A kernel may stay after its call and take the team's next calls from
// a ring in host-mapped memory (resident.go): the ring's words, the
// host's hand-over, and the parking by which a kernel leaves without
// losing a call that races with it.
//
// # User buffers
//
// No plan reads a peer's user buffers: data crosses between ranks only
// through slots. The one-shot allreduce copies its input into its own
// slot for the peers to load; reduce_scatter and the two-shot allreduce
// store each piece straight from the input into the slot of the rank that
// reduces it, and allgather and bcast store into the peers' slots; the
// part of its input that a rank alone reduces it reads from the input.
// Outputs are written from the slots (or by the reduction). A variant
// that reads peers' user buffers directly (buffers registered and mapped)
// must end with a barrier, since the user may overwrite an input as soon
// as its call returns; that variant is not planned here.
package devsync
