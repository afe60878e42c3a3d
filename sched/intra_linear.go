package sched

// intraLinear is the Linear intra-node exchange of Parallel Rings Algorithm 1
// (lines 7-16 for stage 1, 24-34 for stage 3): every GPU posts a receive from
// each other GPU of the node and sends its own block to each of them, all at
// once, in local-index order. On a full NVLink mesh every pair has its own
// link, so nothing contends (section III-B, Fig. 4: Linear is fastest there).
type intraLinear struct{}

func (intraLinear) early(g *intraGroup) {
	G, l := g.run.sh.gpus, g.run.p.Local
	if b := g.run.blk; b.uniform && b.pieces <= 1 {
		linearUniform(g, G, l, b.size)
		return
	}
	for q := 0; q < G; q++ {
		if q != l {
			g.recv(q, q, kindIntra)
		}
	}
	for q := 0; q < G; q++ {
		if q != l {
			g.send(l, q, kindIntra, g.ready)
		}
	}
}

func (intraLinear) late(*intraGroup, int) {}

// linearUniform is early for whole uniform blocks (no chunks), the shape of
// a large allgather, written for speed: a 4096-rank plan runs it 4 million
// times.
func linearUniform(g *intraGroup, G, l int, size int64) {
	if size == 0 {
		return
	}
	a := g.run
	p := a.p
	base := p.Node * G
	first := int64(g.m*G) * size // the group's blocks lie back to back
	tag := a.tags.tag(a.phase, g.m, g.c, kindIntra)
	for q := 0; q < G; q++ {
		if q != l {
			p.Recv(base+q, tag, At(BufDst, first+int64(q)*size), size)
		}
	}
	own := At(BufDst, first+int64(l)*size)
	for q := 0; q < G; q++ {
		if q != l {
			p.Send(base+q, tag, own, size, Path{}, g.ready)
		}
	}
}
