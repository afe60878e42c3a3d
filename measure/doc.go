// Package measure times a machine's GPU paths for a calibration and fits
// what it timed with packages calib and model:
//
//   - GPUPaths (gpu.go, `goring calibrate`): from one process, the direct
//     copy between two GPUs, the path staged through pinned host memory,
//     and the two together at a few shares;
//   - P2P (p2p.go, p2p_rows.go, `goring bench p2p`): between two ranks,
//     the transfer as goring's push engine moves it, alone, through UCX,
//     split as the model says and at every static host share, with the
//     model fitted in the same run (the host path's hops by HostHopFits,
//     hosthops.go); P2PReport is the goring.p2p/v1 document; a rank's
//     join, GPU and runs (JoinP2P, P2PRank: p2p_rank.go);
//   - HostPath (hostpath.go, `goring calibrate`): the host path between
//     the two ranks of a job, timed by bench.PingPong and fitted;
//     CalibrateRank (calibrate.go): one of goring calibrate's two ranks,
//     its join, the host path, and on rank 0 the GPU paths;
//   - HostCalibration and P2PCalibration (documents.go): the calibration
//     documents of `goring calibrate` and of `goring bench p2p
//     --calibration-out`, with what only the running process knows (its
//     host, UCX transports, GPUs, the date).
//
// The CLI reads the flags, starts the ranks and writes the tables, plots
// and documents. Unlike calib the package is not pure: it drives the GPUs
// through package cuda (the driver by dlopen; without one, GPUPaths says
// why it skipped) and the network through ucx_mp and bench's jobs.
package measure
