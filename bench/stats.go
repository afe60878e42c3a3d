package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
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

// gatherRow shares this rank's average latency with every rank (ctrl's
// allgather, as OMB's MPI_Reduce) and makes the row they all agree on.
func gatherRow(ctx context.Context, ctrl Ctrl, cfg *Config, plan *sched.Plan, avgUS float64, timed int, mem string) (Row, error) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], math.Float64bits(avgUS))
	all, err := ctrl.Allgather(ctx, b[:])
	if err != nil {
		return Row{}, err
	}
	per := make([]float64, len(all))
	for r, d := range all {
		if len(d) != 8 {
			return Row{}, fmt.Errorf("rank %d sent a %d-byte timing, want 8", r, len(d))
		}
		per[r] = math.Float64frombits(binary.LittleEndian.Uint64(d))
	}
	s := Summarize(per)
	// A call too fast for the clock (0 us) has no bus bandwidth: the row
	// says 0.
	busbw, _ := coll.BusBandwidthGBps(plan.Collective, plan.NRanks, plan.Bytes, plan.Counts, s.AvgUS)
	return Row{
		Collective: string(plan.Collective), Algorithm: plan.Algorithm, Bytes: rowSize(plan),
		AvgUS: s.AvgUS, MinUS: s.MinUS, MaxUS: s.MaxUS, Iterations: timed,
		BusBWGBps: busbw,
		Validated: cfg.Validate, Mem: mem,
	}, nil
}
