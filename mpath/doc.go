// Package mpath turns the multi-path model's split of one GPU-to-GPU
// transfer (model.Split: bytes per path, chunks per staged path) into the
// copies that carry it, in the order a device must run them: the schedule
// of Multi-path model, Algorithm 1 and Fig. 3, made concrete.
//
// A Plan is a list of Ops on logical streams. The direct share is one copy
// on stream 0. A staged path j pipelines its share in k chunks through a
// staging buffer of Slots chunk-sized slots: chunk i's first hop (source to
// slot i mod Slots) runs on stream 1+2j, its second hop (slot to
// destination) on stream 2+2j after that first hop, so chunk i's second
// hop overlaps chunk i+1's first; and the first hop of chunk i+Slots waits
// until the second hop of chunk i has drained its slot. Every path's first
// op waits for nothing, so all paths start together.
//
// The package is pure: a device executor (package cudaexec) maps streams
// to CUDA streams and waits to events.
//
// # Simulation
//
// Simulate runs a plan on an idealised device and checks it. Each stream
// runs its ops in order; an op is issued once its stream is free and the
// ops it waits for have finished. Its cost is the model's cost of a chunk
// (Multi-path model, eq. 12-13): a first hop or direct copy spends
// Alpha1US, then moves its bytes at Beta1GBps; a second hop spends
// EpsilonUS (the staging synchronization) and Alpha2US, then moves its
// bytes at Beta2GBps. Epsilon is charged once per chunk, on the second hop,
// as part of that hop's time on its stream, whether or not its wait held
// it back: this is the model's convention (stage 2 of a chunk takes
// epsilon + alpha2 + c/beta2, and an unpipelined staged share pays epsilon
// too, eq. 2). Charging it only when the wait binds would make a
// second-hop-bound path s1 + epsilon + k*(alpha2 + c/beta2) long instead of
// the model's s1 + k*s2. The slot-drained wait of a first hop is charged
// nothing: the model assumes unbounded staging and has no such wait.
//
// Contention (model.GammaContention, the model's Contention written as
// gammas: model/contention.go defines both and converts between them):
// while a staged hop moves bytes, a direct copy moves at
// beta/(1+DirectGamma); while a direct copy moves bytes, a staged hop
// moves at beta/(1+StagedGamma). Rates are constant between events (an op
// issued, starting to move bytes, finishing), and the simulation advances
// from event to event over the bytes each op has left, so a path that
// finishes early stops slowing the others. DirectGamma is the gamma
// goring bench p2p fits (there taken to last the direct copy's whole run).
// It cannot by itself produce what the H200 pair measured (docs/model.md
// section 8: host shares of 6-8% gain a few percent, 12% loses): while the
// direct share sets the time, the direct copy loses time in proportion to
// how long the host path runs, which grows with the host share as fast as
// the share saves, so every share gains or every share loses. The reading
// in that section, the host path at about 70% of its own rate while the
// direct copy runs, is StagedGamma 0.43 (a lost fraction of 0.3); with
// DirectGamma 0.03 the simulation gives 6% 1.04x, 8% 1.06x, 10% 1.00x,
// 12% 0.88x, and the contention-free model's 11.8% split, predicted at
// 1.13x, 0.89x (TestSimulateContentionShape).
//
// Checks. After the timing, Simulate checks every staging buffer: each
// second hop's staging bytes must have been written by the first hop that
// carries the same source bytes, that write must have ended before the
// read began, and no other write may touch those bytes from the start of
// that write to the end of the read. A violation is a *Hazard naming the
// ops and their times. Waits that can never be met are an error (a
// deadlock). Then real bytes move: a patterned source, a destination
// holding its complement, a staging buffer per staged path, each op's copy
// applied in the order the ops finished; the destination must equal the
// source, so a lost or misplaced chunk fails even where no ordering rule
// was broken.
//
// # Agreement with the model
//
// With no contention and unbounded staging, every path of the model's own
// split (model.Solve) finishes in the simulation at its Share.PredictedUS
// less its Share.StartUS, to within a nanosecond (Build's chunks differ by
// up to a byte where the model's are equal). The difference is the launch
// offset: the model starts path i after the startups of the used paths
// launched before it (Algorithm 1 line 20), while a plan starts every path
// at t=0, its startups being paid on the device by its own ops. The first
// launched path has no offset and the model's paths finish together, so
// the transfer's total equals Split.PredictedUS (relative difference at
// most 4e-8 over 8 MiB-1 GiB and four path sets, TestSimulateMatchesModel);
// the later paths could have carried a little more. Bounded staging the
// model does not see at all: with two or more slots per path, equal chunks
// lose nothing; one slot serializes the path (k*(s1+s2)).
//
// # Planning a collective's transfers
//
// Planner (planner.go) decides each transfer of a collective between two
// GPUs of one node from a calibration: the send's path hint chooses among
// what the model allows, and the split is the model's for the step's load
// (sched.StepLoad on the hint, model.LoadedPaths), kept only when it is
// predicted to save DefaultMinGain; pairs the file did not measure stay
// direct. docs/model.md section 8.6 derives the load rule; docs/gpu.md
// ("Collectives over several paths") says what runs where.
package mpath
