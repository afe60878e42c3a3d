package coll

import "fmt"

// BusBandwidthGBps is the bus bandwidth of one call of collective c over
// nranks ranks that moved bytes (UCC's meaning, see the Collective
// constants) in us microseconds, as nccl-tests defines it (its
// PERFORMANCE.md): the bytes one rank must move across the slowest cut,
// divided by the time. That makes the figure comparable to a link's speed
// whatever the rank count, so goring bench's measurements and goring sim's
// predictions sit on the same axis as nccl-tests' and each other.
//
// With B = bytes and P = nranks, a rank moves
//
//	allgather, reduce_scatter: (P-1) * B
//	allreduce:                 2(P-1)/P * B
//	bcast:                     B
//	alltoallv:                 the off-diagonal bytes of counts, over P
//
// counts is alltoallv's byte matrix (counts[i][j]: rank i to rank j). The
// diagonal stays on its rank and crosses no link, and the average over
// ranks keeps a skewed matrix comparable to a uniform one. nil counts
// means uniform traffic of B to every rank, where the rule gives (P-1) * B
// as for allgather (nccl-tests' alltoall). Other collectives ignore counts.
func BusBandwidthGBps(c Collective, nranks int, bytes int64, counts [][]int64, us float64) (float64, error) {
	if us <= 0 || nranks < 1 {
		return 0, fmt.Errorf("bus bandwidth: need a positive time and rank count (got %g us, %d ranks)", us, nranks)
	}
	p, b := float64(nranks), float64(bytes)
	var moved float64 // bytes per rank across the bus
	switch c {
	case Allgather, ReduceScatter:
		moved = (p - 1) * b
	case Allreduce:
		moved = 2 * (p - 1) / p * b
	case Bcast:
		moved = b
	case Alltoallv:
		moved = (p - 1) * b
		if counts != nil {
			moved = offDiagonal(counts) / p
		}
	default:
		return 0, fmt.Errorf("bus bandwidth: no nccl-tests definition for %s", c)
	}
	return moved / (us * 1e3), nil // bytes per us / 1e3 = GB/s
}

// offDiagonal sums the bytes of counts that leave their rank.
func offDiagonal(counts [][]int64) float64 {
	var off float64
	for i := range counts {
		for j, v := range counts[i] {
			if i != j {
				off += float64(v)
			}
		}
	}
	return off
}
