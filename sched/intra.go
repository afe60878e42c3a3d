package sched

import "strings"

// The intra-node phase of Parallel Rings (Parallel Rings section III-B/C,
// Table I, Fig. 4 and 5): stage 1 and stage 3 both gather G blocks, one per
// GPU of a node, onto every GPU of the node. Which algorithm does that best
// depends on the node: Linear on a full NVLink mesh (Fig. 4), the
// congestion-aware algorithm on nodes whose GPUs pair up by NVLink across
// two sockets (Fig. 5). Spec.Intra names one of intraTable, each in its own
// intra_*.go file, or "auto" ("" too), which picks by the node's links
// (intra_auto.go): full mesh -> linear, socket pairs -> congestion_aware.
//
// A node with one GPU has no intra-node phase; every variant then adds no
// steps.

// intraVariant is one entry of the intra-node table, as Algorithm is of
// the algorithm table: the name Spec.Intra gives, what it does (with the
// part of the paper it implements), and how to build it for a spec.
type intraVariant struct {
	name string
	desc string
	// build returns the variant for the spec's nodes, or an
	// *UnsupportedError of algorithm alg naming why it cannot run there.
	build func(alg string, spec *Spec, sh hierShape) (intraAlgorithm, error)
}

// intraTable lists the intra-node algorithms in the order IntraAlgorithms
// names them.
var intraTable = []intraVariant{
	{"linear", "Alg. 1 lines 7-16: every GPU sends its block to every other at once", always(intraLinear{})},
	{"btdd", "Ibcast per root, binomial tree, distance doubling (Table I)", always(intraBTDD{})},
	{"btddh", "Ibcast per root, binomial tree, distance halving (Table I)", always(intraBTDDH{})},
	{"knomial", "Ibcast per root, 4-nomial tree (section III-B: K = 4)", always(intraKnomial{})},
	{"iallgather_linear", "Iallgather Linear in Table I's steps, one peer per step", always(intraIallgatherLinear{})},
	{"rd", "Iallgather recursive doubling (Table I)", always(intraRD{})},
	{"congestion_aware", "Alg. 2: NVLink pair, virtual ring across sockets, pair again", newIntraCongestionAware},
}

// always builds a variant that runs on any node and keeps no state.
func always(a intraAlgorithm) func(string, *Spec, hierShape) (intraAlgorithm, error) {
	return func(string, *Spec, hierShape) (intraAlgorithm, error) { return a, nil }
}

// IntraAlgorithms lists the names Spec.Intra accepts.
func IntraAlgorithms() []string {
	names := []string{"auto"}
	for _, v := range intraTable {
		names = append(names, v.name)
	}
	return names
}

// selectIntra returns the intra-node algorithm Spec.Intra names for the
// spec's nodes, or an *UnsupportedError naming why it cannot run there.
func selectIntra(alg string, spec *Spec, sh hierShape) (intraAlgorithm, error) {
	name := spec.Intra
	if name == "" || name == "auto" {
		name = autoIntra(&spec.Topo.Nodes[0])
	}
	for _, v := range intraTable {
		if v.name == name {
			return v.build(alg, spec, sh)
		}
	}
	return nil, Unsupported(alg, "unknown intra-node algorithm %q (known: %s)", spec.Intra, strings.Join(IntraAlgorithms(), ", "))
}

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
