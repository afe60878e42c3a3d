package sched

import (
	"github.com/goring-hpc/goring/coll"
)

// Parallel Rings allreduce: Parallel Rings section V-A. Allreduce as RSA
// (reduce-scatter followed by allgather), both halves as Parallel Rings:
// the vector is cut into P blocks of whole elements (uneven when P does not
// divide the element count: the first blocks get one element more, see
// BlockSpan), rank j ends the reduce-scatter half with block j reduced over
// every rank, in place in dst, and the allgather half spreads the blocks
// with the intra-node algorithm Spec.Intra selects. The allgather of piece c
// of the rank's own block starts as soon as its reduction is done, so the
// two halves overlap piece by piece when Spec.Chunks > 1.
//
// Both halves have nodes-1 inter-node steps on their critical path, so the
// whole has 2*(nodes-1), against 2*(P-1) for the flat ring allreduce.

func init() {
	registerHier(Algorithm{
		Collective: coll.Allreduce,
		Name:       "parallel_rings",
		Desc:       "reduce-scatter then allgather, both as parallel rings (one inter-node ring per local rank/rail)",
		Paper:      "Parallel Rings section V-A (RSA with Parallel Rings for both phases)",
		Intra:      true,
		Rank:       parallelRingsAllreduceRank,
	})
}

func parallelRingsAllreduceRank(spec *Spec, plan *Plan, prog *RankProgram) error {
	run, intra, err := newRingsRun(spec, prog, false, true, 2)
	if err != nil {
		return err
	}
	rs := reduceScatterRun{ringsRun: run, inPlace: true}
	prog.Sizes = Sizes{Src: spec.Bytes, Dst: spec.Bytes, Scratch: rs.scratchBytes()}
	rs.emit()
	run.phase = 1
	ag := allgatherRun{ringsRun: run, intra: intra}
	ag.emit(rs.final)
	return nil
}
