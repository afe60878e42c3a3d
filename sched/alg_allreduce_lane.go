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
	const alg = "lane"
	sh, err := hierShapeOf(alg, spec)
	if err != nil {
		return err
	}
	V, elem := spec.Bytes, spec.DtypeBytes
	G, N := sh.gpus, sh.nodes
	n, l := prog.Node, prog.Local
	maxPart := MaxBlockLen(V, G, elem)
	K := ChunkCount(maxPart, spec.Chunks, elem)
	tags := hierTags{groups: max(G, N), pieces: max(K, 1), kinds: 1}
	if !tags.fits(lanePhases) {
		return Unsupported(alg, "%d nodes x %d pieces overflow 32-bit tags; use fewer chunks", N, K)
	}
	ringArea := int64(0)
	if N > 1 {
		ringArea = maxPart
	}
	prog.Sizes = Sizes{Src: V, Dst: V, Scratch: int64(G-1)*maxPart + ringArea}
	// piece c of part j, or an empty span.
	piece := func(j, c int) Span {
		part := BlockSpan(V, G, j, elem)
		k := ChunkCount(part.Len, spec.Chunks, elem)
		if c >= k {
			return Span{Off: part.Off}
		}
		return ChunkSpan(part, k, c, elem)
	}
	myPart := BlockSpan(V, G, l, elem)
	base := n * G
	next, prev := ((n+1)%N)*G+l, ((n-1+N)%N)*G+l
	path := railPath(spec, n, l)
	p := prog
	for c := 0; c < K; c++ {
		ps := piece(l, c)
		// Stage 1: intra-node reduce-scatter.
		for j := 0; j < G; j++ {
			if pj := piece(j, c); j != l && pj.Len > 0 {
				p.Send(base+j, tags.tag(lanePhaseIntraRS, j, c, 0), At(BufSrc, pj.Off), pj.Len, Path{})
			}
		}
		if ps.Len == 0 {
			continue // every stage of this piece is empty for this GPU
		}
		done := p.Copy(At(BufSrc, ps.Off), At(BufDst, ps.Off), ps.Len)
		i := 0
		for j := 0; j < G; j++ {
			if j == l {
				continue
			}
			slot := At(BufScratch, int64(i)*maxPart+ps.Off-myPart.Off)
			rid := p.Recv(base+j, tags.tag(lanePhaseIntraRS, l, c, 0), slot, ps.Len)
			done = p.Reduce(slot, At(BufDst, ps.Off), ps.Len, rid, done)
			i++
		}
		// Stage 2: ring allreduce of the piece across the lane.
		doneToo := -1
		if N > 1 {
			sub := func(m int) Span {
				s := BlockSpan(ps.Len, N, m, elem)
				return Span{Off: ps.Off + s.Off, Len: s.Len}
			}
			ringBase := int64(G-1) * maxPart
			lastRed := done // last write of the piece in dst
			rsSend := make([]int, N-1)
			for s := 0; s < N-1; s++ {
				sb, rb := sub((n-s+N)%N), sub((n-s-1+N)%N)
				rsSend[s] = -1
				if sb.Len > 0 {
					rsSend[s] = p.Send(next, tags.tag(lanePhaseRingRS, (n-s+N)%N, c, 0), At(BufDst, sb.Off), sb.Len, path, lastRed)
				}
				if rb.Len > 0 {
					slot := At(BufScratch, ringBase+rb.Off-myPart.Off)
					rid := p.Recv(prev, tags.tag(lanePhaseRingRS, (n-s-1+N)%N, c, 0), slot, rb.Len)
					lastRed = p.Reduce(slot, At(BufDst, rb.Off), rb.Len, rid, lastRed)
				}
			}
			// Node n now holds sub-block n+1 reduced over every rank.
			lastRecv := -1
			for s := 0; s < N-1; s++ {
				sm, rm := (n+1-s+2*N)%N, (n-s+N)%N
				sb, rb := sub(sm), sub(rm)
				if sb.Len > 0 {
					dep := lastRecv
					if s == 0 {
						dep = lastRed
					}
					p.Send(next, tags.tag(lanePhaseRingAG, sm, c, 0), At(BufDst, sb.Off), sb.Len, path, dep)
				}
				if rb.Len > 0 {
					// Sub-block rm was read by the reduce-scatter send of
					// round s: overwrite it only after that send.
					lastRecv = p.Recv(prev, tags.tag(lanePhaseRingAG, rm, c, 0), At(BufDst, rb.Off), rb.Len, rsSend[s], lastRecv)
				}
			}
			// The piece is whole once its own sub-block is reduced and the
			// last allgather hop arrived (the receives are chained).
			done, doneToo = lastRed, lastRecv
		}
		// Stage 3: intra-node allgather of the finished piece.
		for j := 0; j < G; j++ {
			if j != l {
				p.Send(base+j, tags.tag(lanePhaseIntraAG, l, c, 0), At(BufDst, ps.Off), ps.Len, Path{}, done, doneToo)
			}
		}
	}
	// Stage 3, receiving side: the other parts' pieces.
	for c := 0; c < K; c++ {
		for j := 0; j < G; j++ {
			if pj := piece(j, c); j != l && pj.Len > 0 {
				p.Recv(base+j, tags.tag(lanePhaseIntraAG, j, c, 0), At(BufDst, pj.Off), pj.Len)
			}
		}
	}
	return nil
}
