package sched

import (
	"fmt"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/nimble"
)

// NIMBLE alltoallv (NIMBLE section IV): every rank computes the same
// min-congestion split of the count matrix (nimble.PlanMWU: direct path,
// 2-hop NVLink relays inside a node, rail-matched paths between nodes,
// demands under 1 MiB unsplit) and sends each piece along its path at once;
// there are no rounds, every transfer is posted as soon as its data and
// buffer are ready.
//
//   - A direct piece goes src -> dst in one send, landing at its offset in
//     the destination's block for the source.
//   - A relayed piece goes src -> relay scratch (a recv), then relay ->
//     next hop from that scratch (a send): one relay for a 2-hop intra-node
//     path, up to two for a rail-matched path (the source node's GPU of
//     rail r, then the destination node's).
//   - Per-destination reassembly (section I): the pieces of one (src, dst)
//     pair, direct or relayed, land at consecutive offsets of that pair's
//     block of dst, in path order, so dst is exactly what pairwise would
//     write, whatever the split.
//
// Scratch stays bounded however much a rank relays, as the paper's small
// per-peer P2P buffers do (section IV-C): a relayed piece travels in chunks
// of at most nimbleSlotBytes, and a relay cycles through nimbleRelaySlots
// slots per pool; Hazards makes a recv into a slot wait for the send that
// last read it. There are two pools, so that slot reuse cannot deadlock: a
// relay whose next hop is the final destination uses pool "last"; the first
// relay of a two-relay rail path uses pool "first", whose sends go to a
// pool-"last" relay. A pool-"last" send needs only the destination's recv,
// which waits for nothing, and a pool-"first" send only a pool-"last" slot
// freed by such a send, so every wait chain ends.
//
// Tags: the k-th transfer from a sender to a receiver, counted over the
// plan's global order (demands row-major, paths, chunks, hops), has tag k,
// so tags are unique per (sender, receiver) pair and both ends compute
// them alone. Path hints: "gpu:N" on the hops into and out of intra-node
// relay N, "rail:R" on the inter-node hop, "direct" on direct intra-node
// pieces.

const (
	// nimbleSlotBytes bounds one relayed chunk (NIMBLE section V-A uses
	// 10 MB P2P buffers per thread block; 4 MiB keeps the pipeline of a
	// 64 MiB piece 16 chunks deep).
	nimbleSlotBytes = 4 << 20
	// nimbleRelaySlots is the slot count of one relay pool.
	nimbleRelaySlots = 4
	// NimbleScratchBoundBytes is the most scratch a rank of a nimble plan
	// allocates: two pools of nimbleRelaySlots slots.
	NimbleScratchBoundBytes = 2 * nimbleRelaySlots * nimbleSlotBytes
)

func init() {
	registerWholePlan(Algorithm{
		Collective: coll.Alltoallv,
		Name:       "nimble",
		Desc:       "NIMBLE: min-congestion multi-path split (2-hop NVLink relays, rail-matched paths) of every demand of 1 MiB or more",
		Paper:      "NIMBLE section IV (IV-B hop-adaptive MCF by multiplicative weights, IV-C relay pipeline)",
	}, func(spec *Spec, plan *Plan, only int) error {
		_, err := nimbleBuild(spec, plan, only, nimble.MWUOptions{})
		return err
	})
}

// GenerateNimble is Generate for algorithm "nimble" with explicit planner
// options (threshold, epsilon, a previous plan for hysteresis; ElemBytes is
// taken from the spec). It also returns the planner's split and link loads.
func GenerateNimble(spec Spec, o nimble.MWUOptions) (*Plan, *nimble.MWUPlan, error) {
	spec.Collective, spec.Algorithm = coll.Alltoallv, "nimble"
	if err := validateSpec(&spec); err != nil {
		return nil, nil, err
	}
	plan := newPlan(&spec, "nimble")
	mp, err := nimbleBuild(&spec, plan, -1, o)
	if err != nil {
		return nil, nil, err
	}
	return plan, mp, nil
}

// nimbleChunk is one chunk of a piece: bytes [off, off+len) of the pair's
// block, on path.
type nimbleChunk struct {
	src, dst int
	off, len int64
	path     *nimble.MWUPath
}

// nimbleBuild plans the split and emits the programs of every rank (only <
// 0) or of rank only.
func nimbleBuild(spec *Spec, plan *Plan, only int, o nimble.MWUOptions) (*nimble.MWUPlan, error) {
	o.ElemBytes = spec.DtypeBytes
	mp, err := nimble.PlanMWU(spec.Topo, spec.Counts, o)
	if err != nil {
		return nil, Unsupported("nimble", "%v", err)
	}
	if err := nimbleHintsFit(plan, mp); err != nil {
		return nil, err
	}
	b := newNimbleRun(spec, plan, only)
	nimbleChunks(spec, mp, b.countSlots)
	b.startPrograms()
	nimbleChunks(spec, mp, b.emit)
	plan.Note = nimbleNote(mp)
	return mp, nil
}

// nimbleHintsFit checks that every rail and relay GPU of the split fits the
// one byte of a path hint.
func nimbleHintsFit(plan *Plan, mp *nimble.MWUPlan) error {
	for _, d := range mp.Demands {
		for _, p := range d.Paths {
			if p.Rail > 255 {
				return Unsupported("nimble", "rail %d does not fit a path hint", p.Rail)
			}
			for _, r := range p.Ranks {
				if plan.Ranks[r].Local > 255 {
					return Unsupported("nimble", "GPU %d of a node does not fit a path hint", plan.Ranks[r].Local)
				}
			}
		}
	}
	return nil
}

// nimbleNote is the plan's note: how much the planner split and relayed,
// and the busiest link before and after.
func nimbleNote(mp *nimble.MWUPlan) string {
	split, relayed := 0, 0
	for _, d := range mp.Demands {
		if d.Split() {
			split++
		}
		for i, p := range d.Paths {
			if p.Hops() > 1 && d.SplitBytes[i] > 0 {
				relayed++
			}
		}
	}
	return fmt.Sprintf("nimble: %d of %d demands split, %d relayed pieces; max link busy %.1f us (%s) -> %.1f us (%s)",
		split, len(mp.Demands), relayed, mp.MaxBeforeUS, mp.BottleneckBefore, mp.MaxAfterUS, mp.BottleneckAfter)
}

// nimbleChunks calls fn for every chunk of the plan in the global order:
// chunk index major (chunk 0 of every piece, then chunk 1, ...), then
// demands row-major, then paths. A direct piece splits into
// ChunkCount(Spec.Chunks) chunks; a relayed one also into chunks of at most
// nimbleSlotBytes. Chunk-major order interleaves the pieces that share a
// relay, so the relay's slots serve them all at once rather than one piece
// after the other.
func nimbleChunks(spec *Spec, mp *nimble.MWUPlan, fn func(nimbleChunk)) {
	elem := spec.DtypeBytes
	slotElems := int64(nimbleSlotBytes / elem)
	type piece struct {
		d    *nimble.MWUDemand
		path *nimble.MWUPath
		span Span
		k    int
	}
	var pieces []piece
	maxK := 0
	for i := range mp.Demands {
		d := &mp.Demands[i]
		off := int64(0)
		for pi := range d.Paths {
			b := d.SplitBytes[pi]
			if b == 0 {
				continue
			}
			k := ChunkCount(b, spec.Chunks, elem)
			if d.Paths[pi].Hops() > 1 {
				k = max(k, int((b/int64(elem)+slotElems-1)/slotElems))
			}
			pieces = append(pieces, piece{d, &d.Paths[pi], Span{off, b}, k})
			maxK = max(maxK, k)
			off += b
		}
	}
	for c := range maxK {
		for _, p := range pieces {
			if c < p.k {
				sp := ChunkSpan(p.span, p.k, c, elem)
				fn(nimbleChunk{src: p.d.Src, dst: p.d.Dst, off: sp.Off, len: sp.Len, path: p.path})
			}
		}
	}
}
