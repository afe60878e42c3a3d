package calib

import (
	"math"

	"github.com/goring-hpc/goring/model"
)

// The together runs of goring calibrate: the direct path and a staged path
// of a GPU pair launched at once, the staged path carrying a share of the
// bytes, timed until both are done. They measure what the Multi-path
// model leaves out, how much the paths slow each other down
// (model.Contention; docs/model.md, "Contention between paths"). This file
// is what of them needs no GPU: the plan of the runs and the fit;
// measure (gpu.go) times the runs, at the shares goring calibrate's
// --shares gives.

// TogetherRounds is how often every share is timed. The rounds run the
// shares one after another, so that a slow spell of the machine lands on
// several shares once rather than on one share every time; the fit's
// outlier test sees each round's samples separately.
const TogetherRounds = 3

// TogetherRun is one timed configuration: DirectBytes over the direct
// path from offset 0 and StagedBytes over the staged path from offset
// DirectBytes, in Chunks chunks of ChunkBytes (the last one shorter).
type TogetherRun struct {
	Share       float64
	DirectBytes int64
	StagedBytes int64
	Chunks      int
	ChunkBytes  int64
}

// PlanTogether lays out the runs for n bytes: per share, the staged part
// rounded to whole bytes and pipelined in the chunk count the model gives
// the staged path for it (model.StagedChunks), as the engine would run
// that split. A share that rounds to nothing runs the direct path alone.
func PlanTogether(n int64, shares []float64, staged model.Path, o model.Options) []TogetherRun {
	runs := make([]TogetherRun, 0, len(shares))
	for _, s := range shares {
		xs := int64(math.Round(s * float64(n)))
		r := TogetherRun{Share: s, DirectBytes: n - xs, StagedBytes: xs}
		if xs > 0 {
			r.Chunks = model.StagedChunks(staged, float64(xs), o)
			r.ChunkBytes = (xs + int64(r.Chunks) - 1) / int64(r.Chunks)
			r.Chunks = int((xs + r.ChunkBytes - 1) / r.ChunkBytes)
		}
		runs = append(runs, r)
	}
	return runs
}

// MeasuredPaths is the direct path and the staged path the solo fits of a
// pair give, as the model will build them from the file (PairPaths).
func MeasuredPaths(direct, staged CalibratedPath, o model.Options) (model.Path, model.Path) {
	eps := o.GPUStageEpsilonUS
	if staged.Path == model.HostName {
		eps = o.HostStageEpsilonUS
	}
	return model.MeasuredDirectPath(direct.AlphaUS, direct.BetaGBps),
		model.MeasuredStagedPath(staged.Path, staged.BetaGBps, staged.ChunkBytes, eps)
}

// FitTogether turns timed runs (usTimes[r][i]: round r, run i) into the
// file's contention entry for the pair, fitted against the pair's solo
// fits.
func FitTogether(direct, staged CalibratedPath, n int64, runs []TogetherRun, usTimes [][]float64, o model.Options) (CalibratedContention, error) {
	c := CalibratedContention{Path: staged.Path, From: direct.From, To: direct.To}
	for _, round := range usTimes {
		for i, us := range round {
			c.Samples = append(c.Samples, model.TogetherSample{Bytes: n, Share: runs[i].Share, Chunks: runs[i].Chunks, US: us})
		}
	}
	cal := &Calibration{Paths: []CalibratedPath{direct, staged}}
	if err := cal.FitCalibratedContention(&c, o); err != nil {
		return c, err
	}
	return c, nil
}
