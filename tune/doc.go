// Package tune decides, from goring's model, where goring's team layer
// should claim a collective from UCC's own host layer, tl/ucp: for each
// collective and size it predicts the time of the algorithm goring would
// run and of the one tl/ucp runs by default, each on the team's shape and
// with its own software's costs, and claims the sizes where goring's
// prediction is the lower by a margin (Compare, Ranges, TuneString).
//
// The prediction is the simulator's (package sim) over the plan of each
// algorithm (package sched), on a topology of the team's processes
// (Regime) with a cost per call and per message for each layer (Layer).
// tl/ucp's algorithms are named by their closest goring schedule
// (UCPAlgorithm, from UCC v1.8.0's default selection strings); where none
// is exact, the doc of UCPAlgorithm says which way the difference leans.
//
// Which algorithm goring runs is not tune's to say: Compare and Claims
// take the chooser from their caller (package choose's Auto, through the
// team layer), and the engine that runs the leader algorithms of a shared
// GPU likewise (Leader: direct.Model), so that tune imports neither the
// executor nor an engine.
//
// On CUDA buffers it also claims by measurement (NodeClaims): goring's
// time against UCC's GPU layers, from tables shipped for the machines
// measured or from the machine's own claims file (ClaimsFile, read from
// bytes by ParseClaims; `goring tune ucc` writes it), at a score above
// tl/cuda's where goring beat the layer UCC would otherwise run.
//
// The package is pure: no cgo, no I/O. The team layer (package team)
// turns its ranges into a UCC score string when a team is created;
// docs/ucc.md "Default scores from the model" says which figures each
// regime uses and where they were measured.
package tune
