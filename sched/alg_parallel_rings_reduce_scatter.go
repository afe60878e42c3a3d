package sched

import (
	"github.com/goring-hpc/goring/coll"
)

// Parallel Rings reduce_scatter: Parallel Rings section V-A. A ring
// reduce-scatter has the communication pattern of the ring allgather (each
// rank sends to rank+1, receives from rank-1) and so leaves all but one HCA
// of a node idle; the section proposes the Parallel Rings structure for it.
// We build it as the mirror image of the allgather:
//
//   - GPUs with the same local index l form one ring across the nodes, on
//     their own rail (hint rail:<GPU.Rail>); ring l carries, for every node
//     m, the partial sums of block (m, l), the output of rank m*G+l;
//   - before a node passes on the partial sum of block (m, l), its G GPUs
//     must have added their contributions to it: GPU l receives block (m, l)
//     from each other local GPU's src and reduces (the intra-node
//     reduce-scatter of the node's G blocks of group m, the mirror of stage 3);
//   - in round k GPU (n, l) handles group m = n-k-1: it reduces the node's
//     contributions to block (m, l), adds the partial that arrived from node
//     n-1 (rounds k >= 1) and passes the sum to node n+1; in the last round
//     (k = nodes-1) m = n and the sum, now over every rank, lands in dst.
//
// The intra-node reduction of group k+1 needs only src, so it runs while
// the ring hop of group k is on the wire: nodes-1 inter-node steps on the
// critical path, as for the allgather. Reductions into one accumulator are
// chained (they write the same bytes); the order is own contribution, the
// other local GPUs in index order, then the ring partial.
//
// Scratch: two sets of slots (groups k and k+1 in flight) of G+1 blocks each:
// an accumulator, the ring receive and G-1 intra-node receives. A slot is
// written again two groups later, after every step that read it completed;
// each piece has its own room in a slot (see pieceSlot).
//
// Layout: src holds block j (rank j's output) at j*Bytes; dst is Bytes.
// The parallel_rings allreduce reuses this with uneven blocks of the vector
// and each rank's result written in place in dst.

func init() {
	registerHier(Algorithm{
		Collective: coll.ReduceScatter,
		Name:       "parallel_rings",
		Desc:       "hierarchical: intra-node reduction overlapped with one inter-node ring per local rank/rail",
		Paper:      "Parallel Rings section V-A (Parallel Rings applied to ring reduce-scatter)",
		Rank:       parallelRingsReduceScatterRank,
	})
}

func parallelRingsReduceScatterRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	run, _, err := newRingsRun(spec, prog, true, false, 1)
	if err != nil {
		return err
	}
	rs := reduceScatterRun{ringsRun: run}
	prog.Sizes = Sizes{Src: int64(run.sh.nranks) * spec.Bytes, Dst: spec.Bytes, Scratch: rs.scratchBytes()}
	rs.emit()
	return nil
}

// reduceScatterRun is the state of one rank's parallel-rings reduce-scatter.
type reduceScatterRun struct {
	ringsRun
	// inPlace writes the result at the block's own offset in dst (allreduce)
	// instead of at offset 0 (reduce_scatter).
	inPlace bool
	// final[c] is the step that completes piece c of the rank's own result
	// (set by emit; -1 for an empty piece).
	final []int
}

// slotsPerSet is the number of block-sized scratch slots per set: an
// accumulator and a ring receive (only with more than one node) and G-1
// intra-node receives.
func (rs *reduceScatterRun) slotsPerSet() int {
	s := rs.sh.gpus - 1
	if rs.sh.nodes > 1 {
		s += 2
	}
	return s
}

// Slots and pieces: with uniform blocks a piece lies in its slot where it
// lies in its block. Uneven blocks (allreduce) cut into pieces give pieces
// of different lengths from block to block, so there piece c of every block
// gets its own room at c*pieceSlot, pieceSlot being the largest piece of any
// block (piece 0 of block 0, see BlockSpan and ChunkSpan): pieces of blocks
// that share a slot two groups apart then never overlap, and the per-piece
// write-after-read dependencies suffice.
func (rs *reduceScatterRun) pieceSlot() int64 { return rs.blk.piece(0, 0).Len }

func (rs *reduceScatterRun) slotBytes() int64 {
	if rs.blk.uniform {
		return rs.blk.size
	}
	return int64(max(rs.blk.pieces, 1)) * rs.pieceSlot()
}

func (rs *reduceScatterRun) scratchBytes() int64 {
	sets := min(2, rs.sh.nodes)
	return int64(sets*rs.slotsPerSet()) * rs.slotBytes()
}

// slot returns the scratch ref of piece c (span ps) of block b in slot i of
// set q.
func (rs *reduceScatterRun) slot(q, i, b, c int, ps Span) Ref {
	off := int64(q*rs.slotsPerSet()+i) * rs.slotBytes()
	if rs.blk.uniform {
		off += ps.Off - rs.blk.block(b).Off
	} else {
		off += int64(c) * rs.pieceSlot()
	}
	return At(BufScratch, off)
}

func (rs *reduceScatterRun) emit() {
	p, sh, blk := rs.p, rs.sh, rs.blk
	n, l, G, N := p.Node, p.Local, sh.gpus, sh.nodes
	K := blk.pieces
	base := n * G
	next := ((n+1)%N)*G + l
	prev := ((n-1+N)%N)*G + l
	path := railPath(rs.spec, n, l)
	// Slot numbers within a set: intra receives 0..G-2, then accumulator
	// and ring receive.
	accSlot, ringSlot := G-1, G
	// lastRead[q][c][i]: the last step that read slot i of set q for piece
	// c; a new write into the slot waits for it.
	spp := rs.slotsPerSet()
	lastRead := make([]int, 2*K*spp)
	for i := range lastRead {
		lastRead[i] = -1
	}
	lr := func(q, c, i int) *int { return &lastRead[(q*K+c)*spp+i] }
	rs.final = make([]int, K)
	for k := 0; k < N; k++ {
		m := (n - k - 1 + N) % N
		q := k % 2
		last := k == N-1
		b := m*G + l // the block this GPU accumulates in round k
		for c := 0; c < K; c++ {
			ps := blk.piece(b, c)
			tagIntra := rs.tags.tag(rs.phase, m, c, kindIntra)
			acc := -1 // the step that last wrote the accumulator
			var accRef Ref
			if ps.Len > 0 {
				switch {
				case last && rs.inPlace:
					accRef = At(BufDst, ps.Off)
				case last:
					accRef = At(BufDst, ps.Off-blk.block(b).Off)
				default:
					accRef = rs.slot(q, accSlot, b, c, ps)
				}
				freed := -1 // the accumulator slot's last reader
				if !last {
					freed = *lr(q, c, accSlot)
				}
				acc = p.Copy(At(BufSrc, ps.Off), accRef, ps.Len, freed)
			}
			// This GPU's contributions to the other local GPUs' blocks of
			// group m, posted when this GPU starts on group m itself.
			for j := 0; j < G; j++ {
				if j == l {
					continue
				}
				if pj := blk.piece(m*G+j, c); pj.Len > 0 {
					p.Send(base+j, tagIntra, At(BufSrc, pj.Off), pj.Len, Path{}, acc)
				}
			}
			if ps.Len == 0 {
				rs.final[c] = -1
				continue
			}
			// The other local GPUs' contributions to block b.
			i := 0
			for j := 0; j < G; j++ {
				if j == l {
					continue
				}
				ref := rs.slot(q, i, b, c, ps)
				rid := p.Recv(base+j, tagIntra, ref, ps.Len, *lr(q, c, i))
				acc = p.Reduce(ref, accRef, ps.Len, rid, acc)
				*lr(q, c, i) = acc
				i++
			}
			// The partial sum of block b from the previous node.
			if k > 0 {
				ref := rs.slot(q, ringSlot, b, c, ps)
				rid := p.Recv(prev, rs.tags.tag(rs.phase, m, c, kindRing), ref, ps.Len, *lr(q, c, ringSlot))
				acc = p.Reduce(ref, accRef, ps.Len, rid, acc)
				*lr(q, c, ringSlot) = acc
			}
			if last {
				rs.final[c] = acc
				continue
			}
			*lr(q, c, accSlot) = p.Send(next, rs.tags.tag(rs.phase, m, c, kindRing), accRef, ps.Len, path, acc)
		}
	}
}
