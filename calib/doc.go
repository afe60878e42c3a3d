// Package calib is goring's calibration: the goring.calibration/v1
// document (docs/contracts.md) that `goring calibrate` and `goring bench
// p2p --calibration-out` write, the fits that fill it from measured
// times, and its readers. It builds on package model's math: Hockney's
// (alpha, beta) per path and its robust fit (model.FitHockney), the
// measured paths (model.MeasuredDirectPath, model.MeasuredStagedPath), the
// contention of two paths (model.FitContention) and the theta/k split.
//
// # The document
//
// Calibration holds one fitted path per measured path, with its samples,
// and optionally how the direct path and a staged path of a GPU pair slow
// each other down (format.go). Parse and Load decode and validate it,
// Encode writes it as the CLI does; ReadFile (file.go) is the only
// function that touches the file system.
//
// # Fits
//
// CalibratedPath.Fit and Calibration.FitCalibratedContention fill a
// document from its samples (fit.go); PlanTogether and FitTogether are how
// `goring calibrate` times and fits a staged path running together with
// the direct path (together.go), at the shares TogetherShares gives
// (together_shares.go).
//
// # goring bench p2p
//
// The push engine between two processes, fitted in the same run
// (p2p.go): P2PPaths builds the model's direct and host paths from the
// run's Hockney fits, StaticSplit the splits its search tries, FitGamma
// the direct path's slowdown beside the host path from the together
// samples (P2PTogether), ContendedSplit the split that accounts for it;
// P2PCalibration turns the fits into the document of --calibration-out
// (p2p_calibration.go). The CLI times the transfers and prints the table.
//
// # Readers
//
//   - NewSplitter (paths.go) installs a file's figures and contention for
//     the pairs it measured: `goring model split --calibration`;
//   - PairPaths, through model.LoadedPaths: mpath.Planner, the split of
//     each transfer of a collective for the load of its step, which
//     package pushplan gives the push engine of `goring bench COLL
//     --calibration` and of the team layer's UCC_TL_GORING_CALIBRATION;
//   - CalibrateTopology (topo.go) puts the measured figures on a
//     topology's links: `goring sim --calibration` and the team layer's
//     scores simulate on that.
//
// The package is pure but for ReadFile: no cgo, no network I/O,
// deterministic.
package calib
