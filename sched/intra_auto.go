package sched

import (
	"strconv"

	"github.com/goring-hpc/goring/topo"
)

// The intra-node phase of Parallel Rings (Parallel Rings section III-B/C, Table I,
// Fig. 4 and 5): stage 1 and stage 3 both gather G blocks, one per GPU of a
// node, onto every GPU of the node. Which algorithm does that best depends
// on the node: Linear on a full NVLink mesh (Fig. 4), the congestion-aware
// algorithm on nodes whose GPUs pair up by NVLink across two sockets
// (Fig. 5). Spec.Intra selects one; each lives in its own intra_*.go file:
//
//	linear             Alg. 1 lines 7-16: every GPU sends its block to every other at once
//	btdd               Ibcast per root, binomial tree, distance doubling (Table I)
//	btddh              Ibcast per root, binomial tree, distance halving (Table I)
//	knomial            Ibcast per root, 4-nomial tree (section III-B: K = 4)
//	iallgather_linear  Iallgather Linear in Table I's steps, one peer per step
//	rd                 Iallgather recursive doubling (Table I)
//	congestion_aware   Alg. 2: NVLink pair, virtual ring across sockets, pair again
//	auto ("")          full mesh -> linear, socket pairs -> congestion_aware
//
// A node with one GPU has no intra-node phase; every variant then adds no
// steps.

// intraAlgorithm emits one GPU's steps of the intra-node allgather of one
// group (the G blocks of node g.m, piece g.c). early adds what may start as
// soon as the GPU's own block of the group is in dst; late adds what the
// paper defers to the next round of the rings (only congestion_aware has
// such steps): postAfter is the ring receive of that next round, or -1 after
// the last round.
type intraAlgorithm interface {
	early(g *intraGroup)
	late(g *intraGroup, postAfter int)
}

// intraGroup is one group of one GPU: which blocks, which piece, and when the
// GPU's own block of the group is ready.
type intraGroup struct {
	run   *allgatherRun
	m, c  int   // the node whose blocks these are; the piece
	ready int   // step after which this GPU's own block is in dst (-1: already)
	stash []int // steps early leaves for late
}

// span is the piece of the group's block of local GPU j in dst.
func (g *intraGroup) span(j int) Span {
	return g.run.blk.piece(g.m*g.run.sh.gpus+j, g.c)
}

// send sends the group's block of local j (held in dst) to local GPU to; -1
// if the piece is empty.
func (g *intraGroup) send(j, to, kind int, deps ...int) int {
	s := g.span(j)
	if s.Len == 0 {
		return -1
	}
	a := g.run
	return a.p.Send(a.p.Node*a.sh.gpus+to, a.tags.tag(a.phase, g.m, g.c, kind), At(BufDst, s.Off), s.Len, Path{}, deps...)
}

// recv receives the group's block of local j from local GPU from; -1 if the
// piece is empty.
func (g *intraGroup) recv(j, from, kind int, deps ...int) int {
	s := g.span(j)
	if s.Len == 0 {
		return -1
	}
	a := g.run
	return a.p.Recv(a.p.Node*a.sh.gpus+from, a.tags.tag(a.phase, g.m, g.c, kind), At(BufDst, s.Off), s.Len, deps...)
}

// selectIntra returns the intra-node algorithm Spec.Intra names for the
// spec's nodes, or an *UnsupportedError naming why it cannot run there.
func selectIntra(alg string, spec *Spec, sh hierShape) (intraAlgorithm, error) {
	name := spec.Intra
	node := &spec.Topo.Nodes[0]
	if name == "" || name == "auto" {
		name = autoIntra(node)
	}
	switch name {
	case "linear":
		return intraLinear{}, nil
	case "iallgather_linear":
		return intraIallgatherLinear{}, nil
	case "btdd":
		return intraBTDD{}, nil
	case "btddh":
		return intraBTDDH{}, nil
	case "knomial":
		return intraKnomial{}, nil
	case "rd":
		return intraRD{}, nil
	case "congestion_aware":
		if sh.gpus == 1 {
			return intraLinear{}, nil // nothing to exchange inside a node
		}
		return newIntraCongestionAware(alg, spec)
	}
	return nil, Unsupported(alg, "unknown intra-node algorithm %q (known: %s)", spec.Intra, "auto, linear, btdd, btddh, knomial, iallgather_linear, rd, congestion_aware")
}

// IntraAlgorithms lists the names Spec.Intra accepts.
func IntraAlgorithms() []string {
	return []string{"auto", "linear", "btdd", "btddh", "knomial", "iallgather_linear", "rd", "congestion_aware"}
}

// AutoIntra names the intra-node algorithm "auto" picks for the nodes of t:
// congestion_aware when the GPUs pair up by NVLink across two sockets
// (Parallel Rings III-C, Fig. 2b), linear otherwise: on a full mesh (III-B,
// Fig. 4) and, for want of a better-founded choice, on any other shape.
func AutoIntra(t *topo.Topology) string { return autoIntra(&t.Nodes[0]) }

func autoIntra(n *topo.Node) string {
	if len(n.GPUs) > 1 && !fullMesh(n) {
		if _, reason := nvlinkPairs(n); reason == "" {
			return "congestion_aware"
		}
	}
	return "linear"
}

// gpuIndex returns the GPU index of endpoint e, or -1 when e is not a GPU.
func gpuIndex(e string) int {
	k, i, err := topo.ParseEndpoint(e)
	if err != nil || k != topo.KindGPU {
		return -1
	}
	return i
}

// fullMesh reports whether every two GPUs of n share a direct NVLink, or all
// GPUs hang off one NVSwitch plane (which is a full mesh to a schedule).
func fullMesh(n *topo.Node) bool {
	G := len(n.GPUs)
	direct := make([]bool, G*G)
	onSwitch := map[string]int{}
	for _, l := range n.Links {
		if l.Kind != topo.NVLink && l.Kind != topo.NVSwitch {
			continue
		}
		a, b := gpuIndex(l.A), gpuIndex(l.B)
		switch {
		case a >= 0 && b >= 0 && a < G && b < G:
			direct[a*G+b], direct[b*G+a] = true, true
		case a >= 0 && b < 0:
			onSwitch[l.B]++
		case b >= 0 && a < 0:
			onSwitch[l.A]++
		}
	}
	for _, cnt := range onSwitch {
		if cnt >= G {
			return true
		}
	}
	for i := 0; i < G; i++ {
		for j := i + 1; j < G; j++ {
			if !direct[i*G+j] {
				return false
			}
		}
	}
	return true
}

// nvlinkPairs derives the NVLink pairing of n's GPUs from its links: each
// GPU must have exactly one NVLink peer, and the GPUs must span at least two
// sockets (Parallel Rings Fig. 2b). peer[i] is GPU i's partner. reason says why n
// is not such a node ("" when it is).
func nvlinkPairs(n *topo.Node) (peer []int, reason string) {
	G := len(n.GPUs)
	peer = make([]int, G)
	for i := range peer {
		peer[i] = -1
	}
	if G%2 != 0 {
		return nil, "an odd number of GPUs per node cannot pair up"
	}
	for _, l := range n.Links {
		if l.Kind != topo.NVLink {
			continue
		}
		a, b := gpuIndex(l.A), gpuIndex(l.B)
		if a < 0 || b < 0 || a >= G || b >= G || a == b {
			continue
		}
		if (peer[a] >= 0 && peer[a] != b) || (peer[b] >= 0 && peer[b] != a) {
			return nil, "a GPU has NVLinks to more than one other GPU (a mesh, not pairs)"
		}
		peer[a], peer[b] = b, a
	}
	for i, q := range peer {
		if q < 0 {
			return nil, "GPU " + strconv.Itoa(i) + " has no NVLink peer"
		}
	}
	sockets := map[int]bool{}
	for _, g := range n.GPUs {
		sockets[g.Socket] = true
	}
	if len(sockets) < 2 {
		return nil, "all GPUs sit on one socket"
	}
	return peer, ""
}

// bcastTree emits GPU l's part of the Ibcast of root j's block over a tree
// given in virtual ranks: vrank maps a local index to its virtual rank (and,
// being used both ways, must be an involution or come with rank), parent
// gives a virtual rank's parent, and children(v, round) its children of a
// round. Sends of one round go out together; a later round's sends wait for
// the earlier round's (the steps of Parallel Rings Table I).
type treeShape interface {
	vrank(x, root, G int) int
	rank(v, root, G int) int
	parent(v, G int) int
	// children appends v's children of its r-th sending round to dst and
	// reports whether there was such a round.
	children(dst []int, v, r, G int) ([]int, bool)
}

func bcastTree(g *intraGroup, t treeShape, root int) {
	G, l := g.run.sh.gpus, g.run.p.Local
	kind := kindIntra + root
	v := t.vrank(l, root, G)
	have := g.ready
	if v != 0 {
		have = g.recv(root, t.rank(t.parent(v, G), root, G), kind)
	}
	var prevBuf, curBuf [8]int
	prev := prevBuf[:0]
	var kids [8]int
	for r := 0; ; r++ {
		ch, ok := t.children(kids[:0], v, r, G)
		if !ok {
			break
		}
		cur := curBuf[:0]
		for _, cv := range ch {
			var deps [9]int
			d := append(deps[:0], have)
			d = append(d, prev...)
			if id := g.send(root, t.rank(cv, root, G), kind, d...); id >= 0 {
				cur = append(cur, id)
			}
		}
		if len(cur) > 0 {
			prevBuf, curBuf = curBuf, prevBuf
			prev = prevBuf[:len(cur)]
		}
	}
}
