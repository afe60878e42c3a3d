// Package sweep predicts a collective over a grid of algorithms and sizes
// with the flow-level simulator: what `goring sim COLL` computes before it
// prints. A Job says what to predict (the collective, its sizes and
// algorithms, the topology, alltoallv's matrix, the simulator's options,
// lanes); a Runner simulates each (algorithm, size, lanes) at most once;
// Job.Results and Job.LaneResults build the goring sim document (Doc and
// its Rows, docs/contracts.md), "auto" included: goring's own choice
// (choose.Auto) with this job's cost table where the measured table has
// no row; Algorithms are what --alg names. Dispatch and combine, whose
// points are token counts of one routing, are predicted a row at a time
// (PredictMoE), every count and algorithm into the MoEDoc (PredictMoEs,
// MoEAlgorithms).
//
// It is apart from package sim because choose, which it asks for auto,
// reads sim's cost figures. The package is pure: no cgo, no I/O; the CLI
// reads the flags and files and prints the tables, JSON and plots.
package sweep
