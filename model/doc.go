// Package model predicts how long a transfer takes on each path between two
// GPUs of a node and how to split one transfer over several paths so that it
// finishes as early as possible. It implements the Multi-path model
// (section 3 and Algorithm 1) with one addition, contention between paths;
// docs/model.md explains the model, derives the pipelining constants phi and
// the contention term, and maps each equation to the code.
//
// # The pieces, bottom up
//
// A Path is Hockney's (alpha, beta) for one way to move bytes: a direct
// path has one hop; a staged path (through another GPU's memory, or through
// host memory) has two hops and a per-chunk synchronization cost epsilon.
// Path.TimeUS gives its time for x bytes in k chunks (path.go).
//
// EnumeratePaths turns a topo.Node into the candidate paths between two
// GPUs: the direct route, a GPU-staged path through every other GPU whose
// routes stay on NVLink, and one host-staged path (enumerate.go).
//
// Solve splits n bytes over a list of paths. The closed form (solve_closed.go)
// writes every path's time as a line Delta_i + Omega_i*x (closedform.go; for
// pipelined staged paths the tangent of pipeline.go), solves eq. 24 for the
// shares theta_i, drops paths whose share comes out negative (Theorem 1) and
// solves again. The reference solver (solve_exact.go) bisects on the common
// finish time with the best integer chunk count per path; tests use it to
// check the closed form.
//
// A Splitter is built once per node topology and answers Split(src, dst,
// bytes, families, exact) quickly: below a size threshold it uses the direct
// path only, and it caches solved configurations per (pair, families, size
// class) as Algorithm 1 does (splitter.go).
//
// Contention (contention.go) is how a staged path and the direct path of the
// same pair slow each other down while both run: the solvers solve each set
// of paths with the bandwidths its paths have together, and OverlapTimeUS
// predicts any split, paths finishing apart included.
//
// # Fits
//
// FitHockney fits alpha and beta to measured (bytes, time) samples, robust to
// a few outliers (fit.go, around Median, which goring calibrate's table
// uses too); FitContention fits the two slowdowns of a staged
// path to samples of it running together with the direct path
// (contention_fit.go). The measured figures become paths through
// MeasuredDirectPath and MeasuredStagedPath (measured_path.go). The
// goring.calibration/v1 document that holds them, and its readers (a
// calibrated Splitter, a pair's measured paths, a calibrated topology), are
// package calib; LoadedPaths (load.go) gives a pair's paths the load of a
// collective's step for mpath.Planner.
//
// NIMBLE's multiplicative-weights planner for whole demand matrices is
// package nimble.
//
// # Example
//
//	node := &topology.Nodes[0]
//	sp, err := model.NewSplitter(node, model.DefaultOptions())
//	// or, with measured figures: calib.NewSplitter(node, cal, model.DefaultOptions())
//	...
//	s, err := sp.Split(0, 1, 64<<20, model.AllPaths, false)
//	for _, sh := range s.Paths {
//		// sh.Path.Name, sh.Bytes, sh.Chunks, sh.PredictedUS
//	}
//
// Units: bytes, microseconds (names end in US) and GB/s = 1e9 bytes/s (names
// end in GBps). The package is pure: no cgo, no file or network I/O, deterministic.
package model
