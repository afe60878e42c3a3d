package sched

import (
	"github.com/goring-hpc/goring/coll"
)

// Lane allreduce: Multi-lane, Algorithm 2 (lane_allreduce, after Traeff and
// Hunold's multi-lane collectives), with one process per GPU.
//
// The vector is cut into G parts of whole elements (uneven when G does not
// divide the element count), part l belonging to local rank l:
//
//  1. intra-node reduce-scatter on the node ("comm_group"): GPU l receives
//     part l of every other local GPU's src into scratch and reduces it into
//     part l of its dst (its own src part copied there first);
//  2. inter-node allreduce of part l on the lane ("comm_lane": the GPUs of
//     local index l on every node), as a ring across the nodes, Multi-lane
//     Algorithm 1: part l cut into nodes sub-blocks, nodes-1 reduce-scatter
//     hops then nodes-1 allgather hops, each lane on its own rail;
//  3. intra-node allgather(v): GPU l sends its finished part to every other
//     local GPU and receives theirs.
//
// Every lane moves 1/G of the vector across the network, so all G rails of
// a node are busy at once (Fig. 3 of Multi-lane). With Spec.Chunks > 1 each
// part is cut into pieces that run the three stages independently, so the
// stages of different pieces overlap.
//
// Scratch: G-1 part-sized slots for stage 1's receives and, with more than
// one node, one part-sized area where each sub-block of stage 2's
// reduce-scatter lands at its own offset (each is received once).

func init() {
	registerHier(Algorithm{
		Collective: coll.Allreduce,
		Name:       "lane",
		Desc:       "multi-lane: intra-node reduce-scatter, ring allreduce per lane across nodes, intra-node allgather",
		Paper:      "Multi-lane Algorithm 2 (lane_allreduce), inter-node stage as Algorithm 1 (ring)",
		Rank:       laneAllreduceRank,
	})
}

// Tag phases of the lane allreduce.
const (
	lanePhaseIntraRS = iota
	lanePhaseRingRS
	lanePhaseRingAG
	lanePhaseIntraAG
	lanePhases
)

func laneAllreduceRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	a, err := newLaneRun(spec, prog)
	if err != nil {
		return err
	}
	for c := 0; c < a.pieces; c++ {
		a.sendContributions(c)
		ps := a.piece(prog.Local, c)
		if ps.Len == 0 {
			continue // every stage of this piece is empty for this GPU
		}
		done := a.reduceContributions(c, ps)
		doneToo := -1
		if a.sh.nodes > 1 {
			done, doneToo = a.ringAllreduce(c, ps, done)
		}
		a.sendFinished(c, ps, done, doneToo)
	}
	a.receiveFinished()
	return nil
}

// laneRun is the state of one rank's lane allreduce: GPU l of node n.
type laneRun struct {
	spec    *Spec
	p       *RankProgram
	sh      hierShape
	tags    hierTags
	pieces  int   // pieces of the largest part
	maxPart int64 // the largest part: one scratch slot
	myPart  Span  // part l, this GPU's
	base    int   // rank of the node's GPU 0
	next    int   // the lane's ring: GPU l of node n+1
	prev    int   // and of node n-1
	path    Path  // the rail of the lane's ring sends
	rsSend  []int // the ring reduce-scatter sends of the current piece
}

func newLaneRun(spec *Spec, prog *RankProgram) (*laneRun, error) {
	const alg = "lane"
	sh, err := hierShapeOf(alg, spec)
	if err != nil {
		return nil, err
	}
	V, elem := spec.Bytes, spec.DtypeBytes
	G, N := sh.gpus, sh.nodes
	n, l := prog.Node, prog.Local
	maxPart := MaxBlockLen(V, G, elem)
	K := ChunkCount(maxPart, spec.Chunks, elem)
	tags := hierTags{groups: max(G, N), pieces: max(K, 1), kinds: 1}
	if !tags.fits(lanePhases) {
		return nil, Unsupported(alg, "%d nodes x %d pieces overflow 32-bit tags; use fewer chunks", N, K)
	}
	ringArea := int64(0)
	if N > 1 {
		ringArea = maxPart
	}
	prog.Sizes = Sizes{Src: V, Dst: V, Scratch: int64(G-1)*maxPart + ringArea}
	return &laneRun{
		spec: spec, p: prog, sh: sh, tags: tags, pieces: K, maxPart: maxPart,
		myPart: BlockSpan(V, G, l, elem),
		base:   n * G,
		next:   ((n+1)%N)*G + l,
		prev:   ((n-1+N)%N)*G + l,
		path:   railPath(spec, n, l),
		rsSend: make([]int, max(N-1, 0)),
	}, nil
}

// piece is piece c of part j, or an empty span.
func (a *laneRun) piece(j, c int) Span {
	part := BlockSpan(a.spec.Bytes, a.sh.gpus, j, a.spec.DtypeBytes)
	k := ChunkCount(part.Len, a.spec.Chunks, a.spec.DtypeBytes)
	if c >= k {
		return Span{Off: part.Off}
	}
	return ChunkSpan(part, k, c, a.spec.DtypeBytes)
}

// sub is sub-block m of piece ps: the ring of stage 2 cuts the piece into
// one sub-block per node.
func (a *laneRun) sub(ps Span, m int) Span {
	s := BlockSpan(ps.Len, a.sh.nodes, m, a.spec.DtypeBytes)
	return Span{Off: ps.Off + s.Off, Len: s.Len}
}

// tag numbers the transfers of group (a part or a sub-block) of piece c in
// one phase.
func (a *laneRun) tag(phase, group, c int) int { return a.tags.tag(phase, group, c, 0) }

// sendContributions is stage 1, sending side: piece c of every other local
// GPU's part, straight from src.
func (a *laneRun) sendContributions(c int) {
	for j := 0; j < a.sh.gpus; j++ {
		if pj := a.piece(j, c); j != a.p.Local && pj.Len > 0 {
			a.p.Send(a.base+j, a.tag(lanePhaseIntraRS, j, c), At(BufSrc, pj.Off), pj.Len, Path{})
		}
	}
}

// reduceContributions is stage 1, receiving side: the own contribution to
// piece ps (piece c of part l) is copied into dst, and every other local
// GPU's is received into its scratch slot and reduced into it. It returns
// the last reduction.
func (a *laneRun) reduceContributions(c int, ps Span) int {
	p := a.p
	done := p.Copy(At(BufSrc, ps.Off), At(BufDst, ps.Off), ps.Len)
	i := 0
	for j := 0; j < a.sh.gpus; j++ {
		if j == p.Local {
			continue
		}
		slot := At(BufScratch, int64(i)*a.maxPart+ps.Off-a.myPart.Off)
		rid := p.Recv(a.base+j, a.tag(lanePhaseIntraRS, p.Local, c), slot, ps.Len)
		done = p.Reduce(slot, At(BufDst, ps.Off), ps.Len, rid, done)
		i++
	}
	return done
}

// ringAllreduce is stage 2: the ring allreduce of piece ps across the lane,
// after the reduction done. The piece is whole once both returned steps
// completed: its own sub-block reduced, and the last allgather hop arrived
// (the receives are chained).
func (a *laneRun) ringAllreduce(c int, ps Span, done int) (int, int) {
	lastRed := a.ringReduceScatter(c, ps, done)
	return lastRed, a.ringAllgather(c, ps, lastRed)
}

// ringReduceScatter is the first half of stage 2 (Multi-lane Algorithm 1,
// first loop): N-1 hops, each sub-block received into its own offset of
// the ring's scratch area and reduced into dst. It returns the last
// reduction, after which node n holds sub-block n+1 reduced over every
// rank, and leaves the sends in rsSend.
func (a *laneRun) ringReduceScatter(c int, ps Span, done int) int {
	p, n, N := a.p, a.p.Node, a.sh.nodes
	ringBase := int64(a.sh.gpus-1) * a.maxPart
	lastRed := done // last write of the piece in dst
	for s := 0; s < N-1; s++ {
		sm, rm := (n-s+N)%N, (n-s-1+N)%N
		sb, rb := a.sub(ps, sm), a.sub(ps, rm)
		a.rsSend[s] = -1
		if sb.Len > 0 {
			a.rsSend[s] = p.Send(a.next, a.tag(lanePhaseRingRS, sm, c), At(BufDst, sb.Off), sb.Len, a.path, lastRed)
		}
		if rb.Len > 0 {
			slot := At(BufScratch, ringBase+rb.Off-a.myPart.Off)
			rid := p.Recv(a.prev, a.tag(lanePhaseRingRS, rm, c), slot, rb.Len)
			lastRed = p.Reduce(slot, At(BufDst, rb.Off), rb.Len, rid, lastRed)
		}
	}
	return lastRed
}

// ringAllgather is the second half of stage 2 (Multi-lane Algorithm 1,
// second loop): N-1 hops of the reduced sub-blocks, received straight into
// dst. It returns the last receive.
func (a *laneRun) ringAllgather(c int, ps Span, lastRed int) int {
	p, n, N := a.p, a.p.Node, a.sh.nodes
	lastRecv := -1
	for s := 0; s < N-1; s++ {
		sm, rm := (n+1-s+2*N)%N, (n-s+N)%N
		sb, rb := a.sub(ps, sm), a.sub(ps, rm)
		if sb.Len > 0 {
			dep := lastRecv
			if s == 0 {
				dep = lastRed
			}
			p.Send(a.next, a.tag(lanePhaseRingAG, sm, c), At(BufDst, sb.Off), sb.Len, a.path, dep)
		}
		if rb.Len > 0 {
			// Sub-block rm was read by the reduce-scatter send of round s:
			// overwrite it only after that send.
			lastRecv = p.Recv(a.prev, a.tag(lanePhaseRingAG, rm, c), At(BufDst, rb.Off), rb.Len, a.rsSend[s], lastRecv)
		}
	}
	return lastRecv
}

// sendFinished is stage 3, sending side: the finished piece ps to every
// other local GPU, once done and doneToo completed.
func (a *laneRun) sendFinished(c int, ps Span, done, doneToo int) {
	for j := 0; j < a.sh.gpus; j++ {
		if j != a.p.Local {
			a.p.Send(a.base+j, a.tag(lanePhaseIntraAG, a.p.Local, c), At(BufDst, ps.Off), ps.Len, Path{}, done, doneToo)
		}
	}
}

// receiveFinished is stage 3, receiving side: every piece of the other
// local GPUs' parts, straight into dst. They are posted after all of this
// GPU's own steps, and wait for nothing.
func (a *laneRun) receiveFinished() {
	for c := 0; c < a.pieces; c++ {
		for j := 0; j < a.sh.gpus; j++ {
			if pj := a.piece(j, c); j != a.p.Local && pj.Len > 0 {
				a.p.Recv(a.base+j, a.tag(lanePhaseIntraAG, j, c), At(BufDst, pj.Off), pj.Len)
			}
		}
	}
}
