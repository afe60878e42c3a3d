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

// BusBandwidthGBps is the nccl-tests bus bandwidth (coll.BusBytes) of one
// collective call of bytes over n ranks taking avgUS; counts is the
// alltoallv byte matrix (nil otherwise). 0 where it is undefined.
func BusBandwidthGBps(c coll.Collective, bytes int64, n int, counts [][]int64, avgUS float64) float64 {
	moved, err := coll.BusBytes(c, n, bytes, counts)
	if avgUS <= 0 || err != nil {
		return 0
	}
	return moved / (avgUS * 1e-6) / 1e9
}
