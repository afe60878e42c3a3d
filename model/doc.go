// Package model predicts how long a transfer takes on each path between two
// GPUs of a node and how to split one transfer over several paths so that it
// finishes as early as possible. It implements the Multi-path model paper
// (docs/papers.md; section 3 and Algorithm 1); docs/model.md explains the model, derives
// the pipelining constants phi, and maps each equation to the code.
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
// FitHockney fits alpha and beta to measured (bytes, time) samples, robust to
// a few outliers (fit.go). A Calibration is goring calibrate's file of such
// fits (calibration.go): ReadCalibration loads it and GPUPaths turns it into
// paths for Splitter.SetPaths, which is how goring model split
// --calibration replaces the topology's nominal figures with measured ones.
// The runtime's split (package mpath, cudaexec's engine) is fed by goring
// bench p2p's in-run fits; the team layer does not read a calibration yet.
//
// PlanMWU is the NIMBLE paper's (NIMBLE) min-congestion planner for a whole demand
// matrix: it splits large demands over direct, 2-hop NVLink and
// rail-matched paths by multiplicative weights so that the most loaded link
// of the cluster carries as little as possible (mwu.go; docs/nimble.md).
//
// # Example
//
//	node := &topology.Nodes[0]
//	sp, err := model.NewSplitter(node, model.DefaultOptions())
//	...
//	s, err := sp.Split(0, 1, 64<<20, model.AllPaths, false)
//	for _, sh := range s.Paths {
//		// sh.Path.Name, sh.Bytes, sh.Chunks, sh.PredictedUS
//	}
//
// Units: bytes, microseconds (names end in US) and GB/s = 1e9 bytes/s (names
// end in GBps). The package is pure: no cgo, no I/O, deterministic.
package model
