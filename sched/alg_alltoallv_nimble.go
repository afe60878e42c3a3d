package sched

import (
	"fmt"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/model"
)

// NIMBLE alltoallv (NIMBLE section IV): every rank computes the same
// min-congestion split of the count matrix (model.PlanMWU: direct path,
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
	Register(Algorithm{
		Collective: coll.Alltoallv,
		Name:       "nimble",
		Desc:       "NIMBLE: min-congestion multi-path split (2-hop NVLink relays, rail-matched paths) of every demand of 1 MiB or more",
		Paper:      "NIMBLE section IV (IV-B hop-adaptive MCF by multiplicative weights, IV-C relay pipeline)",
		Generate: func(spec *Spec, plan *Plan) error {
			_, err := nimbleBuild(spec, plan, -1, model.MWUOptions{})
			return err
		},
		Rank: func(spec *Spec, plan *Plan, prog *RankProgram) error {
			_, err := nimbleBuild(spec, plan, prog.Rank, model.MWUOptions{})
			return err
		},
	})
}

// GenerateNimble is Generate for algorithm "nimble" with explicit planner
// options (threshold, epsilon, a previous plan for hysteresis; ElemBytes is
// taken from the spec). It also returns the planner's split and link loads.
func GenerateNimble(spec Spec, o model.MWUOptions) (*Plan, *model.MWUPlan, error) {
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

// Relay pools (see the file comment).
const (
	nimblePoolFirst = iota
	nimblePoolLast
	nimblePools
)

// nimbleChunk is one chunk of a piece: bytes [off, off+len) of the pair's
// block, on path.
type nimbleChunk struct {
	src, dst int
	off, len int64
	path     *model.MWUPath
}

// nimbleBuild plans the split and emits the programs of every rank (only <
// 0) or of rank only.
func nimbleBuild(spec *Spec, plan *Plan, only int, o model.MWUOptions) (*model.MWUPlan, error) {
	n := plan.NRanks
	elem := spec.DtypeBytes
	o.ElemBytes = elem
	mp, err := model.PlanMWU(spec.Topo, spec.Counts, o)
	if err != nil {
		return nil, Unsupported("nimble", "%v", err)
	}
	for _, d := range mp.Demands {
		for _, p := range d.Paths {
			if p.Rail > 255 {
				return nil, Unsupported("nimble", "rail %d does not fit a path hint", p.Rail)
			}
			for _, r := range p.Ranks {
				if plan.Ranks[r].Local > 255 {
					return nil, Unsupported("nimble", "GPU %d of a node does not fit a path hint", plan.Ranks[r].Local)
				}
			}
		}
	}
	sd := make([][]int64, n)
	rd := make([][]int64, n)
	for r := range n {
		sd[r], rd[r] = AlltoallvDispls(spec.Counts, r)
	}
	mine := func(r int) bool { return only < 0 || r == only }

	// Pass 1: the largest chunk and the chunk count of every relay pool.
	var slotLen, slotCount [][nimblePools]int64
	slotLen = make([][nimblePools]int64, n)
	slotCount = make([][nimblePools]int64, n)
	nimbleChunks(spec, mp, func(c nimbleChunk) {
		for i, m := range c.path.Ranks[1 : len(c.path.Ranks)-1] {
			pool := nimblePool(c.path, i+1)
			slotLen[m][pool] = max(slotLen[m][pool], c.len)
			slotCount[m][pool] = min(slotCount[m][pool]+1, nimbleRelaySlots)
		}
	})
	hz := make([]*Hazards, n)
	for r := range n {
		if !mine(r) {
			continue
		}
		prog := &plan.Ranks[r]
		var scratch int64
		for pool := range nimblePools {
			scratch += slotLen[r][pool] * slotCount[r][pool]
		}
		prog.Sizes = Sizes{Src: sd[r][n], Dst: rd[r][n], Scratch: scratch}
		hz[r] = NewHazards(prog)
		if c := spec.Counts[r][r]; c > 0 {
			hz[r].Copy(At(BufSrc, sd[r][r]), At(BufDst, rd[r][r]), c)
		}
	}

	// Pass 2: emit every hop of every chunk in the global order.
	tags := make([]int32, n*n)
	chain := nimbleChain{}
	used := make([][nimblePools]int64, n) // chunks through each pool so far
	refs := make([]Ref, 0, 4)
	nimbleChunks(spec, mp, func(c nimbleChunk) {
		ranks := c.path.Ranks
		// Where the chunk sits at each rank of its path.
		refs = append(refs[:0], At(BufSrc, sd[c.src][c.dst]+c.off))
		for i, m := range ranks[1 : len(ranks)-1] {
			pool := nimblePool(c.path, i+1)
			slot := used[m][pool] % slotCount[m][pool]
			used[m][pool]++
			base := int64(0)
			if pool == nimblePoolLast {
				base = slotLen[m][nimblePoolFirst] * slotCount[m][nimblePoolFirst]
			}
			refs = append(refs, At(BufScratch, base+slot*slotLen[m][pool]))
		}
		refs = append(refs, At(BufDst, rd[c.dst][c.src]+c.off))
		for h := range len(ranks) - 1 {
			from, to := ranks[h], ranks[h+1]
			tag := int(tags[from*n+to])
			tags[from*n+to]++
			if mine(from) {
				after := -1
				if h > 0 {
					after = chain.prev(from, nimblePool(c.path, h), to, 0)
				}
				id := hz[from].Send(to, tag, refs[h], c.len, nimbleHint(plan, c.path, h), after)
				if h > 0 {
					chain.set(from, nimblePool(c.path, h), to, 0, id)
				}
			}
			if mine(to) {
				relay := h+1 < len(ranks)-1
				after := -1
				if relay {
					after = chain.prev(to, nimblePool(c.path, h+1), from, 1)
				}
				id := hz[to].Recv(from, tag, refs[h+1], c.len, after)
				if relay {
					chain.set(to, nimblePool(c.path, h+1), from, 1, id)
				}
			}
		}
	})
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
	plan.Note = fmt.Sprintf("nimble: %d of %d demands split, %d relayed pieces; max link busy %.1f us (%s) -> %.1f us (%s)",
		split, len(mp.Demands), relayed, mp.MaxBeforeUS, mp.BottleneckBefore, mp.MaxAfterUS, mp.BottleneckAfter)
	return mp, nil
}

// nimbleChunks calls fn for every chunk of the plan in the global order:
// chunk index major (chunk 0 of every piece, then chunk 1, ...), then
// demands row-major, then paths. A direct piece splits into
// ChunkCount(Spec.Chunks) chunks; a relayed one also into chunks of at most
// nimbleSlotBytes. Chunk-major order interleaves the pieces that share a
// relay, so the relay's slots serve them all at once rather than one piece
// after the other.
func nimbleChunks(spec *Spec, mp *model.MWUPlan, fn func(nimbleChunk)) {
	elem := spec.DtypeBytes
	slotElems := int64(nimbleSlotBytes / elem)
	type piece struct {
		d    *model.MWUDemand
		path *model.MWUPath
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

// nimbleChain remembers a relay's last recv from each sender and last send
// to each receiver per pool, so that the chunks of one lane go in order:
// with every chunk of a lane in flight at once, a relay's slots would fill
// together, drain together and leave each link idle half the time; in
// order, chunk c+1 arrives while chunk c leaves.
type nimbleChain map[[4]int]int

// prev is the step last set for (rank, pool, peer, dir), -1 if none.
func (ch nimbleChain) prev(rank, pool, peer, dir int) int {
	if id, ok := ch[[4]int{rank, pool, peer, dir}]; ok {
		return id
	}
	return -1
}

func (ch nimbleChain) set(rank, pool, peer, dir, id int) { ch[[4]int{rank, pool, peer, dir}] = id }

// nimblePool is the pool of the relay at position i (0 < i < hops) of p.
func nimblePool(p *model.MWUPath, i int) int {
	if i+1 == len(p.Ranks)-1 {
		return nimblePoolLast
	}
	return nimblePoolFirst
}

// nimbleHint is the path hint of hop h of p: "rail:R" across nodes,
// "gpu:N" into or out of intra-node relay N, "direct" otherwise.
func nimbleHint(plan *Plan, p *model.MWUPath, h int) Path {
	from, to := p.Ranks[h], p.Ranks[h+1]
	if plan.Ranks[from].Node != plan.Ranks[to].Node {
		return Path{Kind: PathRail, Index: uint8(p.Rail)}
	}
	switch {
	case h > 0:
		return Path{Kind: PathGPU, Index: uint8(plan.Ranks[from].Local)}
	case h+1 < len(p.Ranks)-1:
		return Path{Kind: PathGPU, Index: uint8(plan.Ranks[to].Local)}
	}
	return Path{Kind: PathDirect}
}
