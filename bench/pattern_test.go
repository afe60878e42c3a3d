package bench

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
)

// reduceInputs fills every rank's allreduce input of iteration it.
func reduceInputs(p *Pattern, it int) [][]byte {
	srcs := make([][]byte, p.NRanks)
	for r := range srcs {
		srcs[r] = make([]byte, p.SrcBytes(r))
		p.FillSrc(srcs[r], r, it)
	}
	return srcs
}

// A reposted call that leaves dst as the previous iteration left it (a
// persistent call that never ran again) must fail validation, for every
// op and dtype: the expected output has to change from one iteration to
// the next.
func TestReductionPatternCatchesStaleOutput(t *testing.T) {
	for _, n := range []int{2, 3, 5} {
		for _, d := range coll.Dtypes {
			for _, op := range coll.Ops {
				if !coll.Supports(op, d) {
					continue
				}
				p := &Pattern{Coll: coll.Allreduce, Dtype: d, Op: op, NRanks: n, Bytes: int64(64 * d.Size())}
				for it := 1; it < 4; it++ {
					prev := refReduce(p, reduceInputs(p, it-1))
					require.Error(t, p.Check(prev, 0, it), "n%d %s %s: iteration %d's output accepted for iteration %d", n, d, op, it-1, it)
				}
			}
		}
	}
}

// A reduction that takes one rank's contribution in place of another's
// (a wrong peer, a block reduced twice) must fail validation wherever the
// op can see it: sum, prod and bxor see every input, so no two ranks may
// have the same input, at the rank counts of real jobs (2 nodes of 8...).
func TestReductionPatternCatchesSubstitutedRank(t *testing.T) {
	for _, n := range []int{4, 5, 9, 16, 33} {
		for _, d := range coll.Dtypes {
			for _, op := range []coll.Op{coll.Sum, coll.Prod, coll.Bxor} {
				if !coll.Supports(op, d) {
					continue
				}
				p := &Pattern{Coll: coll.Allreduce, Dtype: d, Op: op, NRanks: n, Bytes: int64(256 * d.Size())}
				srcs := reduceInputs(p, 1)
				for r := range n {
					for s := range n {
						if r == s {
							continue
						}
						swapped := append([][]byte{}, srcs...)
						swapped[s] = srcs[r]
						require.Error(t, p.Check(refReduce(p, swapped), 0, 1), "n%d %s %s: rank %d's input in place of rank %d's accepted", n, d, op, r, s)
					}
				}
			}
		}
	}
}
