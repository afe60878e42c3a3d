package tune

import "github.com/goring-hpc/goring/coll"

// Claims by measurement where several ranks share one GPU. There goring
// runs a call as one process's device work (the leader, package direct),
// while tl/cuda, UCC 1.8's highest default score (40) and so its choice
// with every layer installed, runs each rank's kernels in that rank's
// own context: the contexts of different processes take turns on the
// GPU, so each of tl/cuda's steps waits for turns. tl/nccl makes no team
// there (NCCL refuses two ranks of one host on one GPU), and tl/cuda has
// no allreduce without NVLS: goring's model claims allreduce over tl/ucp
// (Claims). The rows below are what NodeClaims compares: goring's time
// against tl/cuda's, and goring claims at NodeClaimScore where it was
// faster by nodeClaimMargin.

// sharedTables: docs/gpu.md "Through UCC on one shared GPU" (ucc_perftest
// -m cuda, float32, 2, 4 and 8 processes on one H200, 2026-11-29; each
// layer forced by its TUNE string).
var sharedTables = []nodeTable{{
	gpu: "NVIDIA H200", ranks: 2, shared: true,
	rows: map[coll.Collective][]nodeRow{
		coll.Allgather: {
			{16 << 10, 39.6, map[string]float64{"cuda": 579.0}},
			{64 << 10, 44.1, map[string]float64{"cuda": 580.8}},
			{256 << 10, 38.0, map[string]float64{"cuda": 585.1}},
			{1 << 20, 38.2, map[string]float64{"cuda": 870.6}},
			{4 << 20, 36.9, map[string]float64{"cuda": 2627.7}},
			{16 << 20, 57.0, map[string]float64{"cuda": 9811.0}},
			{64 << 20, 136.3, map[string]float64{"cuda": 38333.9}},
			{256 << 20, 455.3, map[string]float64{"cuda": 152723.6}},
		},
		coll.ReduceScatter: {
			{16 << 10, 48.2, map[string]float64{"cuda": 544.3}},
			{64 << 10, 39.5, map[string]float64{"cuda": 547.3}},
			{256 << 10, 45.1, map[string]float64{"cuda": 563.3}},
			{1 << 20, 43.5, map[string]float64{"cuda": 852.0}},
			{4 << 20, 40.4, map[string]float64{"cuda": 2619.7}},
			{16 << 20, 66.2, map[string]float64{"cuda": 9744.0}},
			{64 << 20, 131.1, map[string]float64{"cuda": 38448.1}},
			{256 << 20, 442.7, map[string]float64{"cuda": 153343.0}},
		},
	},
}, {
	gpu: "NVIDIA H200", ranks: 4, shared: true,
	rows: map[coll.Collective][]nodeRow{
		coll.Allgather: {
			{16 << 10, 73.7, map[string]float64{"cuda": 1118.4}},
			{64 << 10, 81.7, map[string]float64{"cuda": 1086.3}},
			{256 << 10, 69.6, map[string]float64{"cuda": 1105.6}},
			{1 << 20, 65.0, map[string]float64{"cuda": 2840.4}},
			{4 << 20, 75.4, map[string]float64{"cuda": 9814.2}},
			{16 << 20, 156.6, map[string]float64{"cuda": 37709.2}},
			{64 << 20, 422.6, map[string]float64{"cuda": 149220.0}},
			{256 << 20, 1530.1, map[string]float64{"cuda": 595045.7}},
		},
		coll.ReduceScatter: {
			{16 << 10, 81.8, map[string]float64{"cuda": 1078.2}},
			{64 << 10, 87.3, map[string]float64{"cuda": 1094.1}},
			{256 << 10, 69.9, map[string]float64{"cuda": 1082.7}},
			{1 << 20, 69.2, map[string]float64{"cuda": 2788.7}},
			{4 << 20, 80.7, map[string]float64{"cuda": 9760.1}},
			{16 << 20, 145.6, map[string]float64{"cuda": 37558.1}},
			{64 << 20, 366.7, map[string]float64{"cuda": 148847.1}},
			{256 << 20, 1318.4, map[string]float64{"cuda": 593788.0}},
		},
	},
}, {
	gpu: "NVIDIA H200", ranks: 8, shared: true,
	rows: map[coll.Collective][]nodeRow{
		coll.Allgather: {
			{16 << 10, 149.2, map[string]float64{"cuda": 2279.5}},
			{64 << 10, 143.5, map[string]float64{"cuda": 2282.4}},
			{256 << 10, 121.5, map[string]float64{"cuda": 3465.0}},
			{1 << 20, 107.0, map[string]float64{"cuda": 10403.2}},
			{4 << 20, 169.2, map[string]float64{"cuda": 38144.4}},
			{16 << 20, 429.0, map[string]float64{"cuda": 149019.3}},
			{64 << 20, 1433.3, map[string]float64{"cuda": 592457.6}},
		},
		coll.ReduceScatter: {
			{16 << 10, 143.8, map[string]float64{"cuda": 2219.9}},
			{64 << 10, 147.3, map[string]float64{"cuda": 2192.0}},
			{256 << 10, 137.2, map[string]float64{"cuda": 3365.4}},
			{1 << 20, 133.4, map[string]float64{"cuda": 10305.0}},
			{4 << 20, 180.3, map[string]float64{"cuda": 37766.0}},
			{16 << 20, 373.0, map[string]float64{"cuda": 147699.5}},
			{64 << 20, 1264.7, map[string]float64{"cuda": 587561.9}},
		},
	},
}}
