package sched

// The machinery the hierarchical generators share (parallel_rings
// allgather, reduce_scatter and allreduce; lane allreduce uses the tags):
// the node-major shape, the placement of blocks and pieces, the tag layout
// and the rail hint of a ring send.

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
// of its own NIC (Parallel Rings III-A: each ring is mapped to a distinct HCA).
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

// ringsRun is what one rank's run of a parallel_rings generator knows: the
// spec, the program it adds to, the shape, the blocks, the tags, and the
// tag phase of the half it emits (the allreduce runs two).
type ringsRun struct {
	spec  *Spec
	p     *RankProgram
	sh    hierShape
	blk   *hierBlocks
	tags  hierTags
	phase int
}

// newRingsRun is the prelude of the parallel_rings generators: the shape
// (equal nodes), the intra-node algorithm Spec.Intra selects when the
// collective has an intra-node allgather (withIntra), the blocks (uniform:
// one rank's Bytes each; else the vector split over the ranks) and a tag
// layout that must number phases phases within 32 bits, else the spec is
// unsupported.
func newRingsRun(spec *Spec, prog *RankProgram, uniform, withIntra bool, phases int) (ringsRun, intraAlgorithm, error) {
	const alg = "parallel_rings"
	sh, err := hierShapeOf(alg, spec)
	if err != nil {
		return ringsRun{}, nil, err
	}
	kinds := 2 // the ring hop and the intra-node reduction
	var intra intraAlgorithm
	if withIntra {
		if intra, err = selectIntra(alg, spec, sh); err != nil {
			return ringsRun{}, nil, err
		}
		kinds = hierKinds(sh.gpus)
	}
	blk := newHierBlocks(uniform, spec.Bytes, sh.nranks, spec.DtypeBytes, spec.Chunks)
	tags := hierTags{groups: sh.nodes, pieces: max(blk.pieces, 1), kinds: kinds}
	if !tags.fits(phases) {
		return ringsRun{}, nil, Unsupported(alg, "%d nodes x %d pieces x %d tag kinds overflow 32-bit tags; use fewer chunks", sh.nodes, blk.pieces, kinds)
	}
	return ringsRun{spec: spec, p: prog, sh: sh, blk: &blk, tags: tags}, intra, nil
}
