package tune

import (
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/onedevice"
)

// The algorithms goring's team layer runs when neither a call nor the
// options name one: measured tables, one place for the team layer (which
// runs them) and the scores (which predict them, Compare's Chooser). The
// model does not choose them yet: asked for goring's own best, it picks
// algorithms the measurements put behind these (docs/ucc.md "Default
// scores from the model").

// DefaultAlgs are the algorithms a team uses when nothing else applies:
// the fastest on host memory in docs/results.md (rabenseifner and ring
// allreduce, ring/neighbor allgather), each valid for any rank count.
// Alltoallv (and alltoall) default to pairwise, the one that plans from a
// rank's own counts alone; nimble must first exchange the count matrix.
var DefaultAlgs = map[coll.Collective]string{
	coll.Allgather:     "ring",
	coll.Allreduce:     "rabenseifner",
	coll.ReduceScatter: "ring",
	coll.Bcast:         "knomial",
	coll.Alltoallv:     "pairwise",
}

// smallAlgs override DefaultAlgs on host memory up to a size, where the
// number of message rounds, not bandwidth, sets the time: recursive
// doubling takes log2(p) exchanges where rabenseifner's allreduce takes
// twice as many and ring's allgather p-1. Measured through coll/ucc with
// OMB on the development machine (docs/ucc.md "Small collectives in C"):
// allreduce, 2 ranks, 0.50-0.70 us against rabenseifner's 0.53-0.93 from
// 4 B to 4 KiB, while at 8 KiB its whole-vector message leaves UCX's
// eager protocol and rabenseifner's halves win (1.66 against 3.63 us);
// allgather, 4 ranks, 0.92-1.45x tl/ucp's speed from 4 B to 8 KiB against
// ring's 0.63-1.15x. (Those runs timed goring with OMB's -c, which slows
// it a little; the comparison between its own algorithms stands.) A shape
// recursive doubling does not serve (a rank count that is no power of
// two) takes the default.
var smallAlgs = map[coll.Collective]struct {
	max int64 // bytes of the call's vector (per rank for allgather)
	alg string
}{
	coll.Allreduce: {4 << 10, "recursive_doubling"},
	coll.Allgather: {8 << 10, "recursive_doubling"},
}

// deviceAlgs are the defaults on CUDA buffers, where every message pays
// UCX's rendezvous (about 0.1 ms on an H100 with processes sharing the
// GPU) and fewer, larger steps win: measured with goring bench --mem cuda,
// 4 processes, 4-256 MiB (docs/gpu.md), parallel_rings allgather 1.1-1.2x
// ring, recursive_doubling allreduce 1.1-1.5x rabenseifner up to 128 MiB.
// A shape the device default does not serve (recursive doubling on a
// rank count that is no power of two) takes the host default.
var deviceAlgs = map[coll.Collective]string{
	coll.Allgather: "parallel_rings",
	coll.Allreduce: "recursive_doubling",
}

// pushAlgs override deviceAlgs where goring's CUDA IPC push carries every
// transfer (a one-host team with the engine): a push costs a copy launch
// and two small messages, so MultiWrite's single step of concurrent
// writes to every peer wins, measured with goring bench --mem cuda, 4
// processes on one H100: 1.35-2.6x parallel_rings over UCX at 4-256 MiB,
// 1.2-1.8x parallel_rings over the push (docs/gpu.md).
var pushAlgs = map[coll.Collective]string{
	coll.Allgather: "multiwrite",
}

// A team of two on the push engine leaves the device defaults from
// PushLargeBytes per call, as measured with goring bench --mem cuda, two
// ranks on two H100 (docs/log/gpu-runs.md "Two GPUs (2026-11-25, 2×H100)",
// --chunks sweep): allreduce
// runs ring (reduce-scatter then allgather: each rank reduces half the
// vector where recursive doubling reduces all of it) and the reducing
// collectives pipeline each transfer in PushLargeChunks pieces, so that
// one piece is reduced while the next is on the wire. At 256 MiB: ring
// allreduce 805 us in two pieces against 927 in one and 1029 for
// recursive doubling; reduce_scatter ring 950 against 1083. More pieces
// cost more than they overlap (each pays the push's clear-to-send and
// done messages): four were slower than two at every size but one. The
// four-process one-GPU runs that chose recursive doubling had no such
// sweep (and an H200 sweep later kept it, docs/gpu.md), so the rule stays
// with the shape it was measured on.
const (
	PushLargeBytes  = 64 << 20
	PushLargeChunks = 2
)

// Team is what the default choice knows of a team besides the call: its
// size, whether goring's CUDA push engine carries every transfer of
// device memory (every rank on one host, the engine on), and whether
// every rank's process sees one and the same GPU (SharedGPU, with Push).
type Team struct {
	Size      int
	Push      bool
	SharedGPU bool
	// GPUs is how many GPUs the ranks' host has (0: not known): with at
	// least one per rank, a push team's ranks can have a GPU each.
	GPUs int
}

// sharedGPUAlgs are the defaults on device memory where every process of
// the team shares one GPU: the leader algorithms, which the team layer
// runs as one process's copies and reductions over every rank's buffers
// (package onedevice), so the GPU never turns between the processes'
// contexts; docs/gpu.md "One process drives a shared GPU" has the
// measurements. Bcast keeps knomial: there the root alone pushes to its
// children, no turn either, and the leader measured the same (50.6
// against 50.2 us at 4 MiB, 133.5 against 130.5 at 64 MiB, 4 processes on
// an H200) while it needs buffers a CUDA IPC handle exports.
var sharedGPUAlgs = map[coll.Collective]string{
	coll.Allgather:     "leader",
	coll.Allreduce:     "leader",
	coll.ReduceScatter: "leader",
}

// PushPair reports whether t is a team of two whose device transfers all
// take the push engine.
func (t Team) PushPair() bool { return t.Push && t.Size == 2 }

// DefaultAlgorithm is the algorithm team t runs for c on bytes (the
// call's vector; per rank for allgather) on host or device memory when
// neither the call nor the options name one, and the one it falls back to
// where that cannot serve the team's shape ("" for none).
func DefaultAlgorithm(c coll.Collective, bytes int64, host bool, t Team) (alg, fallback string) {
	base := DefaultAlgs[c]
	if !host {
		if dev := deviceAlg(c, bytes, t); dev != "" {
			return dev, base
		}
		return base, ""
	}
	if small, ok := smallAlgs[c]; ok && bytes <= small.max {
		return small.alg, base
	}
	return base, ""
}

// deviceAlg is the default of c on device memory ("" where the host
// default serves): the push engine's where every transfer takes it, else
// the UCX path's.
func deviceAlg(c coll.Collective, bytes int64, t Team) string {
	if a := sharedGPUAlgs[c]; a != "" && t.Push && t.SharedGPU && t.Size > 1 &&
		onedevice.Serves(c, t.Size) {
		return a
	}
	if t.PushPair() && c == coll.Allreduce && bytes >= PushLargeBytes {
		return "ring"
	}
	if c == coll.Allgather && t.Push && !t.SharedGPU && t.Size > 2 && t.GPUs >= t.Size {
		return PushSpreadAllgather
	}
	if a := pushAlgs[c]; a != "" && t.Push {
		return a
	}
	return deviceAlgs[c]
}

// PushSpreadAllgather is the allgather of a push team of more than two
// ranks on a host with a GPU for each (multiwrite stays where they share
// fewer GPUs: it was measured best with 4 processes on one H100): each
// rank's GPU copies to its neighbours over its own links, step after
// step, where multiwrite has every GPU write to every peer at once.
// Measured through UCC on 4 H100 over NVSwitch (docs/gpu.md "Through UCC
// on four GPUs", ucc_perftest -m cuda): at 256 MiB per rank, multiwrite
// 3613.5 us, neighbor 2238.7 (NCCL 2501.2 in the same call).
const PushSpreadAllgather = "neighbor"

// DeviceChunks is the pieces a reducing collective's transfers pipeline
// in when it runs its default algorithm on device memory (0: whole): the
// push pair's rule above.
func DeviceChunks(c coll.Collective, bytes int64, t Team) int {
	if !c.Reduces() || !t.PushPair() || bytes < PushLargeBytes {
		return 0
	}
	return PushLargeChunks
}
