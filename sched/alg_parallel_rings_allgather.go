package sched

import (
	"github.com/goring-hpc/goring/coll"
)

// Parallel Rings allgather: seed 000, Algorithm 1 (full-mesh node) and
// Algorithm 2 (inter-socket node), section III.
//
// Ranks are node-major (rank = node*G + local, topo.Locate's block
// placement); dst holds rank j's contribution at j*Bytes. The allgather runs
// in three stages (section III-A):
//
//   - stage 1, local message exchange: the G GPUs of a node gather the node's
//     G blocks with the selected intra-node algorithm (Spec.Intra);
//   - stage 2, parallel rings: GPUs with the same local index form one ring
//     across the nodes (outgoing neighbour rank+G, incoming rank-G, Alg. 1
//     lines 17-18), each on its own rail (the send carries the hint
//     rail:<GPU.Rail>). In round i a GPU forwards the block it got in round
//     i-1 (its own in round 0) and receives the block of node n-i-1, so a
//     ring has nodes-1 rounds: (P/rails)-1 inter-node steps instead of P-1;
//   - stage 3, remote message exchange: the G blocks that arrived on the G
//     GPUs of a node in round i (one per GPU, all from node n-i-1) are
//     exchanged inside the node with the same intra-node algorithm.
//
// Overlap is expressed by dependencies, not barriers: the round-i+1 send of
// a ring waits only for the round-i receive, and stage 3 of round i waits
// only for that receive too, so stage 3 of round i runs while stage 2 of
// round i+1 is on the wire (Alg. 1 lines 20-34). The congestion-aware
// variant additionally defers its third phase by one round, as Algorithm 2
// does (see intra_congestion_aware.go).
//
// The same machinery, with blocks of uneven size and the own block already
// in dst, is the allgather half of the parallel_rings allreduce.

func init() {
	registerHier(Algorithm{
		Collective: coll.Allgather,
		Name:       "parallel_rings",
		Desc:       "hierarchical: intra-node exchange, one inter-node ring per local rank/rail, overlapped redistribution (--intra selects the intra-node phase)",
		Paper:      "seed 000 section III, Algorithms 1 and 2",
		Rank:       parallelRingsAllgatherRank,
	})
}

// registerHier registers a hierarchical algorithm written one rank at a
// time. Its whole-plan generator builds each rank into one reused program
// and copies the result into slices of the exact size, so a large plan
// holds no spare capacity and no step is allocated on its own.
func registerHier(a Algorithm) {
	rank := a.Rank
	a.Generate = func(spec *Spec, plan *Plan) error {
		var work RankProgram
		for r := range plan.Ranks {
			prog := &plan.Ranks[r]
			resetProgram(&work, prog)
			if err := rank(spec, plan, &work); err != nil {
				return err
			}
			prog.Sizes = work.Sizes
			prog.Steps = append(make([]Step, 0, len(work.Steps)), work.Steps...)
			prog.deps = append(make([]int32, 0, len(work.deps)), work.deps...)
		}
		if a.Name == "parallel_rings" && a.Collective != coll.ReduceScatter && (spec.Intra == "" || spec.Intra == "auto") {
			plan.Note = "intra: auto chose " + AutoIntra(spec.Topo)
		}
		return nil
	}
	Register(a)
}

// resetProgram makes work an empty program of the rank of like, keeping
// work's storage.
func resetProgram(work, like *RankProgram) {
	work.Rank, work.Node, work.Local = like.Rank, like.Node, like.Local
	work.Sizes = Sizes{}
	work.Steps = work.Steps[:0]
	work.deps = work.deps[:0]
}

// hierShape is the node-major arrangement the hierarchical algorithms need:
// nodes equal nodes of gpus GPUs each.
type hierShape struct {
	nodes, gpus, nranks int
}

func hierShapeOf(alg string, spec *Spec) (hierShape, error) {
	t := spec.Topo
	g := t.GPUsPerNode()
	if g == 0 {
		g0 := len(t.Nodes[0].GPUs)
		for i := range t.Nodes {
			if len(t.Nodes[i].GPUs) != g0 {
				return hierShape{}, Unsupported(alg, "ranks do not split into equal nodes: node 0 has %d GPUs but node %d has %d", g0, i, len(t.Nodes[i].GPUs))
			}
		}
	}
	return hierShape{nodes: len(t.Nodes), gpus: g, nranks: len(t.Nodes) * g}, nil
}

// railPath is the hint for a ring send of the GPU at (node, local): the rail
// of its own NIC (seed 000 III-A: each ring is mapped to a distinct HCA).
func railPath(spec *Spec, node, local int) Path {
	r := spec.Topo.Nodes[node].GPUs[local].Rail
	if r < 0 || r > 255 {
		return Path{}
	}
	return Path{Kind: PathRail, Index: uint8(r)}
}

// hierBlocks places the P blocks of a hierarchical collective in a buffer:
// uniform blocks of size bytes each (allgather, reduce_scatter), or the
// uneven whole-element split of a vector of total bytes (allreduce, see
// BlockSpan). Every block is cut into the same number of pieces at most
// (Spec.Chunks); a piece index past a block's own piece count is empty.
type hierBlocks struct {
	uniform bool
	size    int64 // uniform: bytes per block; else: bytes of the vector
	nblocks int
	elem    int
	chunks  int // Spec.Chunks
	pieces  int // largest piece count of any block
}

func newHierBlocks(uniform bool, size int64, nblocks, elem, chunks int) hierBlocks {
	b := hierBlocks{uniform: uniform, size: size, nblocks: nblocks, elem: elem, chunks: chunks}
	b.pieces = ChunkCount(b.maxLen(), chunks, elem)
	return b
}

// block is block i's span in the buffer.
func (b *hierBlocks) block(i int) Span {
	if b.uniform {
		return Span{Off: int64(i) * b.size, Len: b.size}
	}
	return BlockSpan(b.size, b.nblocks, i, b.elem)
}

// maxLen is the length of the largest block: one scratch slot.
func (b *hierBlocks) maxLen() int64 {
	if b.uniform {
		return b.size
	}
	return MaxBlockLen(b.size, b.nblocks, b.elem)
}

// piece is piece c of block i (Len 0 when block i has fewer pieces).
func (b *hierBlocks) piece(i, c int) Span {
	if b.uniform && b.pieces <= 1 {
		return Span{Off: int64(i) * b.size, Len: b.size} // the common case, kept cheap
	}
	s := b.block(i)
	k := ChunkCount(s.Len, b.chunks, b.elem)
	if c >= k {
		return Span{Off: s.Off}
	}
	return ChunkSpan(s, k, c, b.elem)
}

// hierTags numbers the transfers of a hierarchical plan so that both ends
// compute the same tag: (phase, group, piece, kind), where group names the
// data (the node whose blocks move, or a sub-block index) and kind the
// transfer within the group (the ring hop, or a round of an intra-node
// algorithm).
type hierTags struct {
	groups, pieces, kinds int
}

// hierKinds is the number of tag kinds per (phase, group, piece): the ring
// hop, and up to 4G+6 intra-node rounds (linear algorithms use one kind per
// peer or root, recursive doubling log2 G + 2, congestion-aware G/2+1).
func hierKinds(gpus int) int { return 4*gpus + 8 }

func (t hierTags) tag(phase, group, piece, kind int) int {
	return ((phase*t.groups+group)*t.pieces+piece)*t.kinds + kind
}

// fits reports whether phases phases of tags stay below 2^31.
func (t hierTags) fits(phases int) bool {
	return int64(phases)*int64(t.groups)*int64(t.pieces)*int64(t.kinds) < 1<<31
}

// Tag kinds shared by the hierarchical generators.
const (
	kindRing  = 0 // the inter-node ring hop of a group
	kindIntra = 1 // first kind an intra-node algorithm may use
)

// allgatherRun is the state of one rank's parallel-rings allgather.
type allgatherRun struct {
	spec  *Spec
	p     *RankProgram
	sh    hierShape
	blk   *hierBlocks
	tags  hierTags
	phase int
	intra intraAlgorithm
	ctx   [2][]intraGroup // the groups of the current and the previous round, per piece
}

func parallelRingsAllgatherRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	const alg = "parallel_rings"
	sh, err := hierShapeOf(alg, spec)
	if err != nil {
		return err
	}
	intra, err := selectIntra(alg, spec, sh)
	if err != nil {
		return err
	}
	B := spec.Bytes
	blk := newHierBlocks(true, B, sh.nranks, spec.DtypeBytes, spec.Chunks)
	tags := hierTags{groups: sh.nodes, pieces: max(blk.pieces, 1), kinds: hierKinds(sh.gpus)}
	if !tags.fits(1) {
		return Unsupported(alg, "%d nodes x %d pieces x %d GPUs overflow 32-bit tags; use fewer chunks", sh.nodes, blk.pieces, sh.gpus)
	}
	prog.Sizes = Sizes{Src: B, Dst: int64(sh.nranks) * B}
	run := allgatherRun{spec: spec, p: prog, sh: sh, blk: &blk, tags: tags, intra: intra}
	run.emit(nil)
	return nil
}

// emit adds the rank's allgather steps. ownReady[c] is the step after which
// piece c of the rank's own block is in dst; nil means copy it from src
// first (Alg. 1 lines 4-5).
func (a *allgatherRun) emit(ownReady []int) {
	p, sh, blk := a.p, a.sh, a.blk
	n, l, G, N := p.Node, p.Local, sh.gpus, sh.nodes
	K := blk.pieces
	me := n*G + l
	for q := range a.ctx {
		if cap(a.ctx[q]) < K {
			a.ctx[q] = make([]intraGroup, K)
		}
		a.ctx[q] = a.ctx[q][:K]
	}
	last := make([]int, K) // per piece: the step that brought the block the ring forwards next
	for c := 0; c < K; c++ {
		if ownReady != nil {
			last[c] = ownReady[c]
			continue
		}
		pc := blk.piece(me, c)
		last[c] = -1
		if pc.Len > 0 {
			last[c] = p.Copy(At(BufSrc, pc.Off-blk.block(me).Off), At(BufDst, pc.Off), pc.Len)
		}
	}
	// Stage 1: the node's own blocks.
	for c := 0; c < K; c++ {
		g := &a.ctx[0][c]
		a.initGroup(g, n, c, last[c])
		a.intra.early(g)
	}
	next := ((n+1)%N)*G + l
	prev := ((n-1+N)%N)*G + l
	path := railPath(a.spec, n, l)
	for i := 0; i < N-1; i++ {
		sm := (n - i + N) % N     // node whose block this rank forwards
		rm := (n - i - 1 + N) % N // node whose block arrives
		cur, nxt := &a.ctx[i%2], &a.ctx[(i+1)%2]
		for c := 0; c < K; c++ {
			// Stage 2: one hop of this rank's ring (Alg. 1 lines 21-23).
			if ps := blk.piece(sm*G+l, c); ps.Len > 0 {
				addStep(p, Step{Op: OpSend, Peer: int32(next), Tag: int32(a.tags.tag(a.phase, sm, c, kindRing)), SrcBuf: BufDst, SrcOff: ps.Off, Len: ps.Len, Path: path}, last[c])
			}
			rid := -1
			if pr := blk.piece(rm*G+l, c); pr.Len > 0 {
				rid = addStep(p, Step{Op: OpRecv, Peer: int32(prev), Tag: int32(a.tags.tag(a.phase, rm, c, kindRing)), DstBuf: BufDst, DstOff: pr.Off, Len: pr.Len})
			}
			last[c] = rid
			// The previous round's deferred phase, then stage 3 of this
			// round's arrivals (Alg. 1 lines 24-34, Alg. 2 lines 46-57).
			a.intra.late(&(*cur)[c], rid)
			g := &(*nxt)[c]
			a.initGroup(g, rm, c, rid)
			a.intra.early(g)
		}
	}
	for c := 0; c < K; c++ {
		a.intra.late(&a.ctx[(N-1)%2][c], -1)
	}
}

func (a *allgatherRun) initGroup(g *intraGroup, m, c, ready int) {
	*g = intraGroup{run: a, m: m, c: c, ready: ready, stash: g.stash[:0]}
}

// deps1 is the dependency list of a step that waits for id, or for
// nothing when id < 0 (a piece that did not exist).
func deps1(id int) []int {
	if id < 0 {
		return nil
	}
	return []int{id}
}
