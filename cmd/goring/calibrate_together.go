package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/goring-hpc/goring/model"
)

// The together runs of goring calibrate: the direct path and a staged path
// of a GPU pair launched at once, the staged path carrying a share of the
// bytes, timed until both are done. They measure what the Multi-path
// model leaves out, how much the paths slow each other down
// (model.Contention; docs/model.md, "Contention between paths"). This file
// is what of them needs no GPU: the shares, the plan of the runs, and the
// fit; calibrate_gpu.go times the runs.

// togetherRounds is how often every share is timed. The rounds run the
// shares one after another, so that a slow spell of the machine lands on
// several shares once rather than on one share every time; the fit's
// outlier test sees each round's samples separately.
const togetherRounds = 3

// parseShares reads --shares: percentages of the bytes on the staged path,
// comma-separated, each in [0, 100). The fit needs two positive shares;
// 0 (the direct path alone, timed the same way) is added when missing, as
// it is the reference the others are compared with.
func parseShares(s string) ([]float64, error) {
	seen := map[float64]bool{0: true}
	out := []float64{0}
	positive := 0
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "%"))
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v >= 0 && v < 100) {
			return nil, fmt.Errorf("--shares %q: %q is not a percentage in [0, 100)", s, f)
		}
		if seen[v/100] {
			continue
		}
		seen[v/100] = true
		out = append(out, v/100)
		positive++
	}
	if positive < 2 {
		return nil, fmt.Errorf("--shares %q: the contention fit needs at least two positive shares", s)
	}
	return out, nil
}

// togetherRun is one timed configuration: directBytes over the direct
// path from offset 0 and stagedBytes over the staged path from offset
// directBytes, in chunks chunks of chunkBytes (the last one shorter).
type togetherRun struct {
	share       float64
	directBytes int64
	stagedBytes int64
	chunks      int
	chunkBytes  int64
}

// planTogether lays out the runs for n bytes: per share, the staged part
// rounded to whole bytes and pipelined in the chunk count the model gives
// the staged path for it (model.StagedChunks), as the engine would run
// that split. A share that rounds to nothing runs the direct path alone.
func planTogether(n int64, shares []float64, staged model.Path, o model.Options) []togetherRun {
	runs := make([]togetherRun, 0, len(shares))
	for _, s := range shares {
		xs := int64(math.Round(s * float64(n)))
		r := togetherRun{share: s, directBytes: n - xs, stagedBytes: xs}
		if xs > 0 {
			r.chunks = model.StagedChunks(staged, float64(xs), o)
			r.chunkBytes = (xs + int64(r.chunks) - 1) / int64(r.chunks)
			r.chunks = int((xs + r.chunkBytes - 1) / r.chunkBytes)
		}
		runs = append(runs, r)
	}
	return runs
}

// measuredPaths is the direct path and the staged path the solo fits of a
// pair give, as the model will build them from the file (PairPaths).
func measuredPaths(direct, staged model.CalibratedPath, o model.Options) (model.Path, model.Path) {
	eps := o.GPUStageEpsilonUS
	if staged.Path == model.HostName {
		eps = o.HostStageEpsilonUS
	}
	return model.MeasuredDirectPath(direct.AlphaUS, direct.BetaGBps),
		model.MeasuredStagedPath(staged.Path, staged.BetaGBps, staged.ChunkBytes, eps)
}

// fitTogether turns timed runs (usTimes[r][i]: round r, run i) into the
// file's contention entry for the pair, fitted against the pair's solo
// fits.
func fitTogether(direct, staged model.CalibratedPath, n int64, runs []togetherRun, usTimes [][]float64, o model.Options) (model.CalibratedContention, error) {
	c := model.CalibratedContention{Path: staged.Path, From: direct.From, To: direct.To}
	for _, round := range usTimes {
		for i, us := range round {
			c.Samples = append(c.Samples, model.TogetherSample{Bytes: n, Share: runs[i].share, Chunks: runs[i].chunks, US: us})
		}
	}
	cal := &model.Calibration{Paths: []model.CalibratedPath{direct, staged}}
	if err := cal.FitCalibratedContention(&c, o); err != nil {
		return c, err
	}
	return c, nil
}
