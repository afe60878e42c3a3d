// Package cpumodel runs devsync's plans on a CPU model of a node's GPUs
// and checks the buffers they produce. It is pure Go (no cgo, no I/O) and
// deterministic: one seed gives one interleaving.
//
// The model (goring's own, for this protocol): every block of every rank
// is an agent that runs its plan one step at a time, in an order a seeded
// scheduler picks. Stores into scratch memory (data slots and flag words)
// go into the storing agent's store buffer and become visible to other
// agents only when drained; the scheduler drains buffered stores one at a
// time, in any order (a weakly ordered memory: a flag may become visible
// before the data stored ahead of it), and a release fence (the Signal
// step's, unless a mutation removes it) drains the agent's whole buffer
// first. An agent sees its own buffered stores. Loads are not reordered:
// the model puts the weakness on the writer's side, where a missing fence
// shows. A rank's blocks start its next call only after all of them ended
// the previous one (the stream order of kernel launches), and a kernel
// ends when its buffered stores have drained. Outputs are buffered stores
// too, and a block ends its call by storing the epoch into its done word
// with release semantics (devsync's "Completion": the word drains only
// after every earlier store of the block); the model's host reads a
// rank's output of a call the moment its done words say the call ended
// (Result.Seen), and Check compares that read with the reference as well.
//
// Every byte of a slot is tagged with the call that stored it, so a load
// of a slot byte not stored by the reader's own call is caught as it
// happens (a stale read), whatever the values; Check then compares every
// output with a host reference reduced in rank order.
//
// Mutations inject the bugs the protocol exists to prevent (a missing
// fence, a reused epoch, a skipped wait, a reduction in another order, a
// done word stored without its release);
// the package's tests assert that the checker catches each.
package cpumodel
