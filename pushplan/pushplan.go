// Package pushplan turns a calibration into the planner of goring's CUDA
// push engine: which transfers between GPUs of one node are split over
// the paths the file measured, and how, for the load of each step
// (mpath.Planner). `goring bench COLL --calibration` (every node of the
// job's topology: TopologyPlanners, topology.go) and the team layer's
// UCC_TL_GORING_CALIBRATION both build their planners here.
//
// It is apart from package calib because mpath reads calib: the planner
// sits above both (and calib, the file and its fits, stays below every
// package that reads it). The package is pure: no cgo, no I/O.
package pushplan

import (
	"slices"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/model"
	"github.com/goring-hpc/goring/mpath"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// NodePlanner is node's mpath.Planner from cal (model.DefaultOptions;
// staged copies in pieces of at most maxStage bytes, the engine's). With
// gpuModel set, node's GPUs are taken to be gpuModel GPUs: a node whose
// figures come from a preset or topo.Synthetic while its GPUs are this
// machine's, so that cal is checked (calib.Calibration.CheckNode) against
// the driver's name. node itself is not modified.
func NodePlanner(node topo.Node, cal *calib.Calibration, gpuModel string, maxStage int64) (*mpath.Planner, error) {
	if gpuModel != "" {
		node.GPUs = slices.Clone(node.GPUs)
		for g := range node.GPUs {
			node.GPUs[g].Model = gpuModel
		}
	}
	return mpath.NewPlanner(&node, cal, model.DefaultOptions(), maxStage)
}

// ForRank is the engine's planner of rank in tp, given pl, the planner of
// rank's node: a transfer to a peer of the same node is split as pl
// decides between their local GPUs; one to another node never is (nil
// plan). It is nil when pl is nil or tp does not place rank. The result
// converts to cudaexec.Planner.
func ForRank(tp *topo.Topology, rank int, pl *mpath.Planner) func(peer int, n int64, path sched.Path) *mpath.Plan {
	node, local, ok := tp.Locate(rank)
	if pl == nil || !ok {
		return nil
	}
	return func(peer int, n int64, path sched.Path) *mpath.Plan {
		pn, peerLocal, ok := tp.Locate(peer)
		if !ok || pn != node {
			return nil
		}
		return pl.Plan(local, peerLocal, n, path)
	}
}
