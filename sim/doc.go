// Package sim is goring's flow-level simulator: it runs the per-rank
// programs of package sched over a topology of package topo and predicts
// how long the collective takes and how loaded every link is. It lets
// algorithms be compared at sizes no machine here has (thousands of GPUs)
// and gives the library its default algorithm choice (see model's cost
// table).
//
// # The model
//
// Every link of a node is two directed links (one per direction of a full
// duplex bundle, one shared link for a half-duplex one) with capacity
// Count*BetaGBps and startup AlphaUS. Each node's NIC port on each rail is
// an "up" and a "down" link; the rail switch is non-blocking. Each GPU also
// has a memory link on which its local copies and reductions run.
//
// A send and the recv it matches (same sender, receiver and tag; the k-th
// of each pair up in step order) become one flow when both are posted,
// that is when each one's dependencies are done: a rendezvous. The flow's
// route is
//
//   - same node: the fewest-hop, widest route between the two GPUs that
//     transits only switches and host bridges; a "gpu:N" hint stages through
//     GPU N and a "host" hint through the sender socket's host memory, and
//     the flow then occupies every link of both legs at once (a pipelined
//     staged copy);
//   - different nodes: from the source GPU to its NIC (if the node
//     describes NIC links), the sender's up port and the receiver's down
//     port of rail r ("rail:N" hint, else the source GPU's Rail, else for
//     a GPU without one the rail at position local index mod rails), then from
//     the NIC to the destination GPU.
//
// The flow first waits the sum of the startups of its links (the rail's
// startup is counted once), then moves its bytes. Flows that share a
// directed link share it max-min fairly; rates are recomputed by
// progressive filling over the connected set of flows and links that a
// start or an end touches, and nothing else is revisited.
//
// Local copies and reductions wait a launch latency and then run on their
// GPU's memory link at a copy rate from the GPU model's HBM bandwidth (a
// reduction makes three memory passes per byte, a copy two). With
// CopyEngineSerial, a GPU sends at most one intra-node transfer at a time:
// the exclusive copy engine of Parallel Rings section III-C.
//
// # Use
//
//	res, err := sim.Simulate(topology, plan, sim.Options{})
//	fmt.Println(res.TotalUS, res.Bottleneck)
//
// TotalUS is when the last rank finishes; RankEndUS says when each one
// did and MeanRankEndUS averages them, the prediction of a time measured
// per rank and averaged over ranks (goring bench --netns, goring sim
// --rank-avg).
//
// Run generates the plan from a sched.Spec first (package choose and
// goring sim wrap it as the predictor of a model.CostTable: the model's
// answer to auto where no measured row covers a shape).
//
// With Options.Trace every transfer is recorded with the links it shared;
// ClassifyTransfers turns such a trace into the congestion classes of
// Parallel Rings Table I (free, incast, serialised, duplicate), and docs/reproductions.md
// compares them, and the simulator's other predictions, with the papers.
//
// # Measured figures
//
// The simulator takes every link figure from the topology and reads no
// calibration itself. `goring sim --calibration FILE` first replaces the
// figures of the links a goring.calibration/v1 file measured
// (calib.Calibration.CalibrateTopology) and simulates on that topology; the
// file's contention between paths that share no link is not modelled here.
//
// The simulator is deterministic: events with equal times run in the order
// they were scheduled.
package sim
