package measure

import (
	"context"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/calib"
)

// HostRun is what goring calibrate times on the host path: the sizes,
// and the timed and untimed round trips per size (as bench.PingPong).
type HostRun struct {
	Sizes         []int64
	Iters, Warmup int
}

// GPURun is what goring calibrate times on the GPU paths (GPUPaths): the
// sizes, the host-staged path's chunk, the copies per path and size, and
// the host path's shares of the together runs.
type GPURun struct {
	Sizes  []int64
	Chunk  int64
	Iters  int
	Shares []float64
}

// CalibrateRank is one of goring calibrate's two processes: it joins its
// job over one lane of host memory (bench.JoinLanes), times the host path
// with its peer and leaves the job (HostPath); rank 0 then times the GPU
// paths alone, which need no peer, and gets the whole document, the other
// rank nil.
func CalibrateRank(ctx context.Context, j bench.Join, host HostRun, gpu GPURun) (*calib.Calibration, error) {
	rank := j.Role.Rank
	j.Local = rank
	rj, err := bench.JoinLanes(ctx, j, false, 1)
	if err != nil {
		return nil, err
	}
	defer rj.Close()
	cal, err := HostPath(ctx, rj, rank, host.Sizes, host.Iters, host.Warmup)
	if err != nil || rank != 0 {
		return nil, err
	}
	GPUPaths(gpu.Sizes, gpu.Chunk, gpu.Iters, gpu.Shares).AddTo(cal)
	return cal, nil
}
