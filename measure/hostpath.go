package measure

import (
	"context"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/ucx"
)

// HostPath is goring calibrate's run of the host path between the two
// ranks of rj (rank is this one's): the one-way time of every size
// (bench.PingPong over the job's UCX transport, buffers from UCX, iters
// and warmup as there), a barrier, and a clean exit from the job. Rank 0
// gets the fitted document (HostCalibration), the other rank nil.
func HostPath(ctx context.Context, rj *bench.RankJob, rank int, sizes []int64, iters, warmup int) (*calib.Calibration, error) {
	lat, err := bench.PingPong(ctx, rj.Tr, rank, sizes, iters, warmup, ucx.Alloc, ucx.Free)
	if err != nil {
		rj.WaitVerdict()
		return nil, err
	}
	if err := rj.Sess.Barrier(ctx); err != nil {
		return nil, err
	}
	if err := rj.Finish(); err != nil {
		return nil, err
	}
	if rank != 0 {
		return nil, nil
	}
	return HostCalibration(sizes, lat)
}
