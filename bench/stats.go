package bench

import (
	"math"

	"github.com/goring-hpc/goring/coll"
)

// Summary is the spread of per-rank average latencies, in microseconds.
type Summary struct {
	AvgUS, MinUS, MaxUS float64
}

// Summarize reduces each rank's average latency the way OMB does: the mean,
// minimum and maximum over ranks.
func Summarize(perRankUS []float64) Summary {
	if len(perRankUS) == 0 {
		return Summary{}
	}
	s := Summary{MinUS: math.Inf(1), MaxUS: math.Inf(-1)}
	sum := 0.0
	for _, v := range perRankUS {
		sum += v
		s.MinUS = math.Min(s.MinUS, v)
		s.MaxUS = math.Max(s.MaxUS, v)
	}
	s.AvgUS = sum / float64(len(perRankUS))
	return s
}

// BusBandwidthGBps is the nccl-tests bus bandwidth of one collective call
// of bytes (UCC's meaning, see package coll) over n ranks taking avgUS.
// counts is the alltoallv byte matrix (nil otherwise).
func BusBandwidthGBps(c coll.Collective, bytes int64, n int, counts [][]int64, avgUS float64) float64 {
	if avgUS <= 0 || n < 1 {
		return 0
	}
	var moved float64 // bytes per rank across the bus
	B := float64(bytes)
	nf := float64(n)
	switch c {
	case coll.Allgather, coll.ReduceScatter:
		moved = (nf - 1) * B
	case coll.Allreduce:
		moved = 2 * (nf - 1) / nf * B
	case coll.Bcast:
		moved = B
	case coll.Alltoallv:
		if counts == nil {
			moved = (nf - 1) * B
			break
		}
		var off float64
		for i := range counts {
			for j, v := range counts[i] {
				if i != j {
					off += float64(v)
				}
			}
		}
		moved = off / nf
	}
	return moved / (avgUS * 1e-6) / 1e9
}
