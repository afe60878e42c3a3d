package sched

import (
	"github.com/goring-hpc/goring/coll"
)

// Parallel Rings allgather: Parallel Rings, Algorithm 1 (full-mesh node) and
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
		Paper:      "Parallel Rings section III, Algorithms 1 and 2",
		Intra:      true,
		Rank:       parallelRingsAllgatherRank,
	})
}

// allgatherRun is the state of one rank's parallel-rings allgather.
type allgatherRun struct {
	ringsRun
	intra intraAlgorithm
	ctx   [2][]intraGroup // the groups of the current and the previous round, per piece
}

func parallelRingsAllgatherRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	run, intra, err := newRingsRun(spec, prog, true, true, 1)
	if err != nil {
		return err
	}
	prog.Sizes = Sizes{Src: spec.Bytes, Dst: int64(run.sh.nranks) * spec.Bytes}
	ag := allgatherRun{ringsRun: run, intra: intra}
	ag.emit(nil)
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
				p.Send(next, a.tags.tag(a.phase, sm, c, kindRing), At(BufDst, ps.Off), ps.Len, path, last[c])
			}
			rid := -1
			if pr := blk.piece(rm*G+l, c); pr.Len > 0 {
				rid = p.Recv(prev, a.tags.tag(a.phase, rm, c, kindRing), At(BufDst, pr.Off), pr.Len)
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
