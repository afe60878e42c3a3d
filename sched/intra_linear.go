package sched

// intraLinear is the Linear intra-node exchange of seed 000 Algorithm 1
// (lines 7-16 for stage 1, 24-34 for stage 3): every GPU posts a receive from
// each other GPU of the node and sends its own block to each of them, all at
// once, in local-index order. On a full NVLink mesh every pair has its own
// link, so nothing contends (section III-B, Fig. 4: Linear is fastest there).
type intraLinear struct{}

func (intraLinear) early(g *intraGroup) {
	G, l := g.run.sh.gpus, g.run.p.Local
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
