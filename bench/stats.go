package bench

import "math"

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
