package choose

import "github.com/goring-hpc/goring/coll"

// Mem is the memory a row applies to.
type Mem int

const (
	AnyMem Mem = iota // either: the row does not depend on where the buffers are
	Host              // host memory
	Device            // CUDA memory
)

// Row is one measured rule: the algorithm (and pieces) goring runs for
// Coll where every condition holds; a zero condition holds everywhere.
type Row struct {
	Coll coll.Collective
	Mem  Mem
	// OneHost: only where every rank is on one host, the only device
	// teams any device row was measured on; elsewhere the model decides.
	OneHost bool
	// MinBytes and MaxBytes bound the call's bytes (the vector; per rank
	// for allgather), both included; 0: no bound.
	MinBytes, MaxBytes int64
	// Push: only where goring's CUDA push engine carries every device
	// transfer (one host, the engine on). Pair: only a team of two.
	// Spread: only more than two ranks on a host with a GPU each.
	Push, Pair, Spread bool
	// Leader: only where every rank shares one GPU, the push engine is on
	// and the one-process engine serves the call (direct.Serves).
	Leader bool
	Alg    string
	// Chunks is the pieces each transfer pipelines in (0: whole).
	Chunks int
	// OverNode: where the row decides, the call runs as the row's
	// messages even where the node kernels could run it (package team's
	// node runner, which otherwise takes every CUDA call of a team with a
	// GPU a rank that it serves): they were measured faster there.
	OverNode bool
}

// PushLargeBytes is where a push pair's reducing collectives leave the
// device defaults (the rows that name it below).
const PushLargeBytes = 64 << 20

// PushPairAllgatherBytes is where a push pair's allgather leaves the
// node kernels for the engine's copies (its row below).
const PushPairAllgatherBytes = 32 << 20

// Table is goring's one algorithm-selection table: for each collective,
// its rows in the order they are tried; the first that matches a shape
// decides (Measured), and the last that matches it, which carries no
// bounds on bytes, is the fallback where the first cannot serve the
// shape. Every row says where it was measured.
var Table = []Row{
	// Host memory: the fastest in docs/results.md (goring bench on the
	// development machine, nodes emulated), each valid for any rank count.
	// Up to a size the number of message rounds, not bandwidth, sets the
	// time: recursive doubling takes log2(p) exchanges where
	// rabenseifner's allreduce takes twice as many and ring's allgather
	// p-1. Measured through coll/ucc with OMB on the development machine
	// (docs/ucc.md "Small collectives in C"): allreduce, 2 ranks,
	// 0.50-0.70 us against rabenseifner's 0.53-0.93 from 4 B to 4 KiB,
	// while at 8 KiB its whole-vector message leaves UCX's eager protocol
	// and rabenseifner's halves win (1.66 against 3.63 us); allgather, 4
	// ranks, 0.92-1.45x tl/ucp's speed from 4 B to 8 KiB against ring's
	// 0.63-1.15x. (Those runs timed goring with OMB's -c, which slows it
	// a little; the comparison between its own algorithms stands.)
	{Coll: coll.Allreduce, Mem: Host, MaxBytes: 4 << 10, Alg: "recursive_doubling"},
	{Coll: coll.Allreduce, Mem: Host, Alg: "rabenseifner"},
	{Coll: coll.Allgather, Mem: Host, MaxBytes: 8 << 10, Alg: "recursive_doubling"},
	{Coll: coll.Allgather, Mem: Host, Alg: "ring"},
	{Coll: coll.ReduceScatter, Mem: Host, Alg: "ring"},
	{Coll: coll.Bcast, Mem: Host, Alg: "knomial"},

	// Device memory where every process shares one GPU: the leader
	// algorithms, which the team layer runs as one process's copies and
	// reductions over every rank's buffers (package direct's device backend), so the
	// GPU never turns between the processes' contexts; docs/gpu.md "One
	// process drives a shared GPU" has the measurements. Bcast keeps
	// knomial: there the root alone pushes to its children, no turn
	// either, and the leader measured the same (50.6 against 50.2 us at 4
	// MiB, 133.5 against 130.5 at 64 MiB, 4 processes on an H200) while
	// it needs buffers a CUDA IPC handle exports.
	{Coll: coll.Allreduce, Mem: Device, OneHost: true, Leader: true, Alg: "leader"},
	{Coll: coll.Allgather, Mem: Device, OneHost: true, Leader: true, Alg: "leader"},
	{Coll: coll.ReduceScatter, Mem: Device, OneHost: true, Leader: true, Alg: "leader"},

	// A team of two on the push engine from PushLargeBytes, as measured
	// with goring bench --mem cuda, two ranks on two H100
	// (docs/log/gpu-runs.md "Two GPUs (2026-11-25, 2×H100)", --chunks
	// sweep): allreduce runs ring (reduce-scatter then allgather: each
	// rank reduces half the vector where recursive doubling reduces all of
	// it) and the reducing collectives pipeline each transfer in two
	// pieces, so that one piece is reduced while the next is on the wire.
	// At 256 MiB: ring allreduce 805 us in two pieces against 927 in one
	// and 1029 for recursive doubling; reduce_scatter ring 950 against
	// 1083. More pieces cost more than they overlap (each pays the push's
	// clear-to-send and done messages): four were slower than two at
	// every size but one. The four-process one-GPU runs that chose
	// recursive doubling had no such sweep (and an H200 sweep later kept
	// it, docs/gpu.md), so the rule stays with the shape it was measured
	// on.
	//
	//
	// These messages also beat the node kernels on a pair, where the
	// kernels run in pieces (beyond one 64 MiB slot), so they run in
	// their place there (OverNode): through UCC on two H200s (docs/gpu.md
	// "Two H200s: the node kernels or the messages", one call, µs),
	// allreduce 128 MiB 404.7 against the kernels' 470.8 and 256 MiB
	// 743.6 against 928.5; reduce_scatter of 64, 128 and 256 MiB a rank
	// (two pieces and more) 255.5, 453.2 and 842.9 against 272.1, 518.0
	// and 1032.7 (32 MiB: 166.2 against the kernels' 136.3). An allreduce
	// of 64 MiB fits one slot, and the kernel kept it: 237.2 against the
	// messages' 236.9 there, and the messages took 270.5 and 257.4 in two
	// later calls through UCC.
	{Coll: coll.Allreduce, Mem: Device, OneHost: true, Push: true, Pair: true, MinBytes: PushLargeBytes + 1, Alg: "ring", Chunks: 2, OverNode: true},
	{Coll: coll.Allreduce, Mem: Device, OneHost: true, Push: true, Pair: true, MinBytes: PushLargeBytes, Alg: "ring", Chunks: 2},
	{Coll: coll.ReduceScatter, Mem: Device, OneHost: true, Push: true, Pair: true, MinBytes: PushLargeBytes, Alg: "ring", Chunks: 2, OverNode: true},
	// Allgather on a pair from PushPairAllgatherBytes a rank: the push
	// engine's copies, not the node kernel's stores, in the same call:
	// 120.2 µs against 145.8 at 32 MiB a rank (16 MiB: 80.2 against
	// 82.2; 8 MiB: 55.9 against 51.5). Beyond 32 MiB the kernel's slot
	// is too small and the copies ran either way.
	{Coll: coll.Allgather, Mem: Device, OneHost: true, Push: true, Pair: true, MinBytes: PushPairAllgatherBytes, Alg: "multiwrite", OverNode: true},

	// Allgather on the push engine, more than two ranks with a GPU each
	// (a shared GPU took the leader row above): each rank's GPU copies to
	// its neighbours over its own links, step after step, where
	// multiwrite has every GPU write to every peer at once. Measured
	// through UCC on 4 H100 over NVSwitch (docs/gpu.md "Through UCC on
	// four GPUs", ucc_perftest -m cuda): at 256 MiB per rank, multiwrite
	// 3613.5 us, neighbor 2238.7 (NCCL 2501.2 in the same call).
	{Coll: coll.Allgather, Mem: Device, OneHost: true, Push: true, Spread: true, Alg: "neighbor"},
	// Elsewhere on the push engine a push costs a copy launch and two
	// small messages, so MultiWrite's single step of concurrent writes to
	// every peer wins, measured with goring bench --mem cuda, 4 processes
	// on one H100: 1.35-2.6x parallel_rings over UCX at 4-256 MiB,
	// 1.2-1.8x parallel_rings over the push (docs/gpu.md).
	{Coll: coll.Allgather, Mem: Device, OneHost: true, Push: true, Alg: "multiwrite"},

	// Device memory over UCX, where every message pays UCX's rendezvous
	// (about 0.1 ms on an H100 with processes sharing the GPU) and fewer,
	// larger steps win: measured with goring bench --mem cuda, 4
	// processes, 4-256 MiB (docs/gpu.md), parallel_rings allgather
	// 1.1-1.2x ring, recursive_doubling allreduce 1.1-1.5x rabenseifner up
	// to 128 MiB. The last row of each is the host's: where the one before
	// cannot serve a shape (recursive doubling on a rank count that is no
	// power of two), it runs.
	{Coll: coll.Allgather, Mem: Device, OneHost: true, Alg: "parallel_rings"},
	{Coll: coll.Allgather, Mem: Device, OneHost: true, Alg: "ring"},
	{Coll: coll.Allreduce, Mem: Device, OneHost: true, Alg: "recursive_doubling"},
	{Coll: coll.Allreduce, Mem: Device, OneHost: true, Alg: "rabenseifner"},
	{Coll: coll.ReduceScatter, Mem: Device, OneHost: true, Alg: "ring"},
	{Coll: coll.Bcast, Mem: Device, OneHost: true, Alg: "knomial"},

	// Alltoallv (and alltoall) run pairwise on any memory and shape: the
	// one that plans from a rank's own counts alone; nimble must first
	// exchange the count matrix, and the model has no bytes to price a
	// matrix it has not seen.
	{Coll: coll.Alltoallv, Alg: "pairwise"},

	// Dispatch and combine (package team's MoE calls): multiwrite, which
	// crosses the rails once per (token, remote node) and on one node is
	// unicast's direct copies; unicast where the nodes' GPU counts differ
	// and the same-index relay has no GPU to land on.
	{Coll: coll.Dispatch, Alg: "multiwrite"},
	{Coll: coll.Dispatch, Alg: "unicast"},
	{Coll: coll.Combine, Alg: "multiwrite"},
	{Coll: coll.Combine, Alg: "unicast"},
}
