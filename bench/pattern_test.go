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

// A moving collective's output block taken from the wrong place of the
// right rank's input (an alltoallv displacement off by a peer's block,
// pieces of a bcast swapped) must fail validation at any block size. The
// byte pattern repeated every 16 MiB, so alltoallv blocks of 16 MiB to
// every peer (a power-of-two size every --bytes walk passes) could not
// tell one peer's block from another's.
func TestMovePatternTellsBlocksOfOneRankApart(t *testing.T) {
	const block = 16 << 20
	counts := [][]int64{{block, block}, {block, block}}
	p := &Pattern{Coll: coll.Alltoallv, NRanks: 2, Counts: counts}
	src := make([]byte, p.SrcBytes(1))
	p.FillSrc(src, 1, 0)
	own := make([]byte, p.SrcBytes(0))
	p.FillSrc(own, 0, 0)
	// Rank 0's dst: its own block for itself, then rank 1's block for
	// rank 1 where rank 1's block for rank 0 belongs.
	dst := append(append([]byte{}, own[:block]...), src[block:]...)
	require.Error(t, p.Check(dst, 0, 0), "rank 1's block for rank 1 accepted as its block for rank 0")
	dst = append(append([]byte{}, own[:block]...), src[:block]...)
	require.NoError(t, p.Check(dst, 0, 0))

	// The same for offsets farther apart than 2^32, where an int32
	// offset would wrap: the pattern differs at every such shift.
	for _, d := range []int64{1 << 24, 3 << 24, 1 << 32, 1 << 40} {
		same := true
		for x := int64(0); x < 4096 && same; x++ {
			same = patternByte(3, 1, x) == patternByte(3, 1, x+d)
		}
		require.False(t, same, "the pattern repeats after %d bytes", d)
	}
	// And for ranks 256 apart (jobs that mpirun starts may be larger).
	same := true
	for x := int64(0); x < 4096 && same; x++ {
		same = patternByte(5, 1, x) == patternByte(5+256, 1, x)
	}
	require.False(t, same, "ranks 5 and 261 have the same input")
}
