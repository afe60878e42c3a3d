package tune

import (
	"sort"
	"strings"

	"github.com/goring-hpc/goring/coll"
)

// Claims by measurement on a node of GPUs. Where goring's node kernels
// run (CUDA buffers, a team on one host with a GPU a rank: package
// nodeexec), goring's time against UCC's own GPU layers was measured,
// not predicted: NodeClaims claims the sizes where goring was faster than
// every such layer the context has, at a score above theirs, so that a
// user with UCC's defaults gets goring exactly there.

// NodeClaimScore is above tl/cuda's default score (40), the highest of
// UCC 1.8's GPU layers (tl/nccl 20, tl/ucp 10).
const NodeClaimScore = 41

// nodeRow is one size of a measured table: goring's time and each peer
// layer's, µs, at bytes per rank (an allreduce's vector, an allgather's
// input block, a reduce_scatter's output block); 0: the layer has no
// such call.
type nodeRow struct {
	bytes  int64
	goring float64
	peers  map[string]float64
}

// nodeTable is a measured machine: the GPU model its name starts with,
// the ranks, and the rows per collective.
type nodeTable struct {
	gpu   string
	ranks int
	rows  map[coll.Collective][]nodeRow
}

// nodeTables: docs/gpu.md "Through UCC on four GPUs" (ucc_perftest -m
// cuda, float32, 4 processes on 4 H100 over NVSwitch, 2026-11-28; NVLS
// compiled out, so tl/cuda has no allreduce).
var nodeTables = []nodeTable{{
	gpu: "NVIDIA H100", ranks: 4,
	rows: map[coll.Collective][]nodeRow{
		coll.Allreduce: {
			{16 << 10, 40.2, map[string]float64{"nccl": 27.4}},
			{64 << 10, 28.4, map[string]float64{"nccl": 27.5}},
			{256 << 10, 29.3, map[string]float64{"nccl": 27.0}},
			{1 << 20, 55.3, map[string]float64{"nccl": 34.3}},
			{4 << 20, 92.9, map[string]float64{"nccl": 71.5}},
			{16 << 20, 208.4, map[string]float64{"nccl": 113.2}},
			{64 << 20, 574.9, map[string]float64{"nccl": 355.6}},
		},
		coll.Allgather: {
			{16 << 10, 23.4, map[string]float64{"nccl": 24.5, "cuda": 36.2}},
			{64 << 10, 25.7, map[string]float64{"nccl": 24.4, "cuda": 33.9}},
			{256 << 10, 30.2, map[string]float64{"nccl": 84.1, "cuda": 36.2}},
			{1 << 20, 39.2, map[string]float64{"nccl": 75.1, "cuda": 100.5}},
			{4 << 20, 71.4, map[string]float64{"nccl": 82.0, "cuda": 350.1}},
			{16 << 20, 253.1, map[string]float64{"nccl": 272.7, "cuda": 1373.5}},
			{64 << 20, 929.1, map[string]float64{"nccl": 679.7, "cuda": 5176.0}},
		},
		coll.ReduceScatter: {
			{16 << 10, 25.4, map[string]float64{"nccl": 19.9, "cuda": 31.1}},
			{64 << 10, 27.4, map[string]float64{"nccl": 19.7, "cuda": 30.3}},
			{256 << 10, 31.0, map[string]float64{"nccl": 22.5, "cuda": 30.5}},
			{1 << 20, 39.0, map[string]float64{"nccl": 45.1, "cuda": 91.5}},
			{4 << 20, 87.9, map[string]float64{"nccl": 72.4, "cuda": 317.3}},
			{16 << 20, 242.1, map[string]float64{"nccl": 203.1, "cuda": 1325.1}},
			{64 << 20, 866.7, map[string]float64{"nccl": 677.7, "cuda": 5142.8}},
		},
	},
}}

// NodeClaims is the score string of the CUDA calls goring claims on a
// node team of ranks ranks whose GPU is named gpu, given the layers of
// the UCC context (UCC's names: "ucp", "nccl", "cuda", ...); "" where no
// measured table fits. A row decides from its size (the first from 0) up
// to the next row's, the last up to twice its size: beyond the table
// nothing is claimed.
func NodeClaims(gpu string, ranks int, layers []string) string {
	t := findNodeTable(gpu, ranks)
	if t == nil {
		return ""
	}
	present := map[string]bool{}
	for _, l := range layers {
		present[strings.ToLower(strings.TrimSpace(l))] = true
	}
	colls := make([]coll.Collective, 0, len(t.rows))
	for c := range t.rows {
		colls = append(colls, c)
	}
	sort.Slice(colls, func(i, j int) bool { return colls[i] < colls[j] })
	var out []string
	for _, c := range colls {
		rows := t.rows[c]
		pts := make([]Point, len(rows)+1)
		for i, r := range rows {
			pts[i] = Point{Bytes: r.bytes, Claimed: fasterThanPresent(r, present)}
		}
		pts[len(rows)] = Point{Bytes: 2 * rows[len(rows)-1].bytes} // the end of the table
		if s, err := TuneString(c, "cuda", ranks, Ranges(pts), NodeClaimScore); err == nil && s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "#")
}

func fasterThanPresent(r nodeRow, present map[string]bool) bool {
	for name, us := range r.peers {
		if present[name] && us > 0 && us <= r.goring {
			return false
		}
	}
	return true
}

func findNodeTable(gpu string, ranks int) *nodeTable {
	for i := range nodeTables {
		if t := &nodeTables[i]; t.ranks == ranks && strings.HasPrefix(gpu, t.gpu) {
			return t
		}
	}
	return nil
}
