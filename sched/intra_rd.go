package sched

// intraRD is "Iallgather: RD" (recursive doubling) of Parallel Rings Table I. In
// step k every GPU exchanges everything it holds with the GPU whose local
// index differs in bit k: first its own block with its NVLink peer (0<->1,
// 2<->3: congestion-free), then two blocks across the sockets (0<->2, 1<->3:
// the duplicate transfers the table marks D), and so on.
//
// Recursive doubling needs a power-of-two count; for other G we fold, as
// MPICH-style implementations do: with p2 the largest power of two <= G, GPU
// e >= p2 first hands its block to GPU e-p2, the first p2 GPUs run recursive
// doubling on the blocks they hold (their own and their folded partner's),
// and finally GPU e-p2 sends GPU e every block but its own. The paper only
// measures 4 GPUs per node, so the fold is our extension.
//
// A GPU's holdings after step k are the blocks of a contiguous index range
// (plus the matching folded range); runs of pieces that lie back to back in
// dst travel as one transfer.
type intraRD struct{}

func (intraRD) early(g *intraGroup) {
	G, l := g.run.sh.gpus, g.run.p.Local
	if G == 1 {
		return
	}
	p2 := highBit(G)
	extra := G - p2
	rounds := 0
	for 1<<rounds < p2 {
		rounds++
	}
	kindPre, kindPost := kindIntra, kindIntra+1+rounds
	if l >= p2 {
		g.send(l, l-p2, kindPre, g.ready)
		g.rangeXfer(false, l-p2, kindPost, 0, l, nil)
		g.rangeXfer(false, l-p2, kindPost, l+1, G, nil)
		return
	}
	held := append(g.stash[:0], g.ready) // steps that brought what this GPU holds
	if l < extra {
		held = append(held, g.recv(l+p2, l+p2, kindPre))
	}
	for k := 0; k < rounds; k++ {
		d := 1 << k
		partner := l ^ d
		mine, theirs := l&^(d-1), partner&^(d-1)
		var got []int
		// What this GPU holds: blocks [mine, mine+d) and their folded
		// partners [p2+mine, p2+mine+d) that exist.
		g.rangeXfer(true, partner, kindIntra+1+k, mine, mine+d, held)
		g.rangeXfer(true, partner, kindIntra+1+k, p2+mine, min(p2+mine+d, G), held)
		got = g.rangeXfer(false, partner, kindIntra+1+k, theirs, theirs+d, got)
		got = g.rangeXfer(false, partner, kindIntra+1+k, p2+theirs, min(p2+theirs+d, G), got)
		held = append(held, got...)
	}
	if l < extra {
		e := l + p2
		g.rangeXfer(true, e, kindPost, 0, e, held)
		g.rangeXfer(true, e, kindPost, e+1, G, held)
	}
	g.stash = held[:0]
}

func (intraRD) late(*intraGroup, int) {}

// rangeXfer sends (send true, waiting for deps) or receives (send false,
// appending the receive ids to deps and returning it) the group's blocks of
// locals [a, b) to or from local peer, one transfer per run of pieces that
// lie back to back in dst. Both ends cut the range the same way.
func (g *intraGroup) rangeXfer(send bool, peer, kind, a, b int, deps []int) []int {
	for j := a; j < b; {
		s := g.span(j)
		k := j + 1
		for k < b {
			t := g.span(k)
			if t.Len == 0 || t.Off != s.Off+s.Len {
				break
			}
			s.Len += t.Len
			k++
		}
		j = k
		if s.Len == 0 {
			continue
		}
		a := g.run
		to, tag := a.p.Node*a.sh.gpus+peer, a.tags.tag(a.phase, g.m, g.c, kind)
		if send {
			a.p.Send(to, tag, At(BufDst, s.Off), s.Len, Path{}, deps...)
		} else {
			deps = append(deps, a.p.Recv(to, tag, At(BufDst, s.Off), s.Len))
		}
	}
	return deps
}
