package coll

import "fmt"

// BusBytes is the bytes per rank that a collective moves across the "bus"
// in nccl-tests' definition of bus bandwidth (its PERFORMANCE.md): the
// figure that, divided by the time, is comparable to a link's speed
// whatever the rank count. With bytes in UCC's meaning (see Collective)
// and n ranks:
//
//	allgather, reduce_scatter: (n-1) * bytes
//	allreduce:                 2(n-1)/n * bytes
//	bcast:                     bytes
//	alltoallv:                 the off-diagonal bytes of counts over n
//	                           ((n-1) * bytes when counts is nil: bytes per peer)
//
// counts is the alltoallv byte matrix (sender by receiver), nil otherwise.
// The diagonal stays on its rank and crosses no link, and the average over
// ranks keeps a skewed matrix comparable to a uniform one.
func BusBytes(c Collective, n int, bytes int64, counts [][]int64) (float64, error) {
	if n < 1 {
		return 0, fmt.Errorf("bus bandwidth: %d ranks", n)
	}
	b, nf := float64(bytes), float64(n)
	switch c {
	case Allgather, ReduceScatter:
		return (nf - 1) * b, nil
	case Allreduce:
		return 2 * (nf - 1) / nf * b, nil
	case Bcast:
		return b, nil
	case Alltoallv:
		if counts == nil {
			return (nf - 1) * b, nil
		}
		var off float64
		for i := range counts {
			for j, v := range counts[i] {
				if i != j {
					off += float64(v)
				}
			}
		}
		return off / nf, nil
	}
	return 0, fmt.Errorf("bus bandwidth: no nccl-tests definition for %s", c)
}

// BusBandwidthGBps is the bus bandwidth of one call that took us
// microseconds: BusBytes over the time, in GB/s. Every bus bandwidth
// goring prints comes from here, so goring bench's measurements and goring
// sim's predictions sit on the same axis as nccl-tests' and each other.
func BusBandwidthGBps(c Collective, n int, bytes int64, counts [][]int64, us float64) (float64, error) {
	if us <= 0 {
		return 0, fmt.Errorf("bus bandwidth: need a positive time (got %g us)", us)
	}
	moved, err := BusBytes(c, n, bytes, counts)
	if err != nil {
		return 0, err
	}
	return moved / (us * 1e3), nil // bytes per us / 1e3 = GB/s
}
