package tune

import (
	"sort"
	"strings"

	"github.com/goring-hpc/goring/coll"
)

// Claims by measurement on a node of GPUs. On a team on one host with a
// GPU a rank (package nodeexec's kernels, then the push engine's
// messages), goring's time against UCC's own GPU layers was measured, not
// predicted: NodeClaims claims the sizes where goring was faster (by
// nodeClaimMargin) than the layer UCC would otherwise run, the present
// layer of the highest default score that has the collective, at a
// score above theirs. So a user with UCC's defaults gets goring exactly
// where it beats what they would get without it: on UCC 1.8, tl/cuda's
// allgather and reduce_scatter (score 40) even where tl/nccl (20), which
// UCC does not pick, is faster still.

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

// nodeTable is a measured machine: the driver's name of its GPUs (a
// shipped table fits that name alone: "NVIDIA H100" would also take an
// H100 PCIe or NVL, whose links differ from the NVSwitch node measured),
// the ranks, whether they shared one GPU (else a GPU each), and the rows
// per collective.
type nodeTable struct {
	gpu    string
	ranks  int
	shared bool
	rows   map[coll.Collective][]nodeRow
}

// nodeTables: the H100 node from docs/gpu.md "Through UCC on four GPUs" (ucc_perftest -m
// cuda, float32, 4 processes on 4 H100 over NVSwitch, 2026-11-28; NVLS
// compiled out, so tl/cuda has no allreduce). goring's times are the last
// run's (the node kernels up to 64 MiB of slot, then the messages); each
// peer's is the fastest of its three runs that day, so that a claim holds
// against the peer's good days too.
var nodeTables = []nodeTable{{
	gpu: "NVIDIA H100 80GB HBM3", ranks: 4,
	rows: map[coll.Collective][]nodeRow{
		coll.Allreduce: {
			{16 << 10, 24.0, map[string]float64{"nccl": 23.3}},
			{64 << 10, 25.2, map[string]float64{"nccl": 23.2}},
			{256 << 10, 27.9, map[string]float64{"nccl": 24.5}},
			{1 << 20, 37.9, map[string]float64{"nccl": 31.2}},
			{4 << 20, 58.6, map[string]float64{"nccl": 52.7}},
			{16 << 20, 128.7, map[string]float64{"nccl": 113.2}},
			{64 << 20, 394.3, map[string]float64{"nccl": 337.9}},
			{256 << 20, 2039.9, map[string]float64{"nccl": 1206.8}},
		},
		coll.Allgather: {
			{16 << 10, 23.6, map[string]float64{"nccl": 21.3, "cuda": 35.5}},
			{64 << 10, 23.9, map[string]float64{"nccl": 20.8, "cuda": 33.9}},
			{256 << 10, 27.4, map[string]float64{"nccl": 25.1, "cuda": 34.0}},
			{1 << 20, 36.3, map[string]float64{"nccl": 53.6, "cuda": 93.1}},
			{4 << 20, 72.8, map[string]float64{"nccl": 77.2, "cuda": 342.4}},
			{16 << 20, 219.0, map[string]float64{"nccl": 203.1, "cuda": 1369.3}},
			{64 << 20, 635.0, map[string]float64{"nccl": 676.4, "cuda": 5176.0}},
			{256 << 20, 2238.7, map[string]float64{"nccl": 2496.9, "cuda": 20060.0}},
		},
		coll.ReduceScatter: {
			{16 << 10, 24.3, map[string]float64{"nccl": 19.9, "cuda": 28.3}},
			{64 << 10, 26.4, map[string]float64{"nccl": 19.7, "cuda": 30.1}},
			{256 << 10, 28.9, map[string]float64{"nccl": 22.5, "cuda": 30.5}},
			{1 << 20, 37.8, map[string]float64{"nccl": 45.1, "cuda": 87.6}},
			{4 << 20, 76.1, map[string]float64{"nccl": 72.4, "cuda": 317.3}},
			{16 << 20, 240.0, map[string]float64{"nccl": 203.1, "cuda": 1205.0}},
			{64 << 20, 868.0, map[string]float64{"nccl": 677.7, "cuda": 4791.9}},
			{256 << 20, 3059.1, map[string]float64{"nccl": 2482.5, "cuda": 17998.5}},
		},
	},
}, {
	// docs/gpu.md "Two H200s through UCC, against tl/nccl and tl/cuda":
	// goring tune ucc on 2 H200 over NV18, 2026-11-29 20:39 UTC, 2
	// processes, every power of two, 1000 calls a size, every layer in
	// the same call (goring with its resident node kernels). One call's
	// times, not the slowest and fastest of several machines: small
	// calls of every layer moved by 15-25% between machines of this kind
	// (tl/nccl's 16 KiB allreduce 17.4 µs on one, 20.0 on another), and a
	// ratio holds within one call. Where this call claims, goring was
	// faster by more than the margin in the earlier calls too: the one
	// with the same kernels (19:36-19:46 UTC, 20000 calls a size, 16 KiB
	// to 1 MiB) and, from 2 MiB, the four of 13:15-13:40 UTC (the
	// kernels before they read their call from shared memory).
	gpu: "NVIDIA H200", ranks: 2,
	rows: map[coll.Collective][]nodeRow{
		coll.Allreduce: {
			{16 << 10, 15.1, map[string]float64{"nccl": 20.0}},
			{32 << 10, 15.4, map[string]float64{"nccl": 20.2}},
			{64 << 10, 17.9, map[string]float64{"nccl": 20.6}},
			{128 << 10, 18.1, map[string]float64{"nccl": 21.3}},
			{256 << 10, 18.9, map[string]float64{"nccl": 23.0}},
			{512 << 10, 26.0, map[string]float64{"nccl": 24.5}},
			{1 << 20, 23.7, map[string]float64{"nccl": 27.8}},
			{2 << 20, 31.3, map[string]float64{"nccl": 41.2}},
			{4 << 20, 36.6, map[string]float64{"nccl": 47.8}},
			{8 << 20, 51.0, map[string]float64{"nccl": 62.4}},
			{16 << 20, 82.3, map[string]float64{"nccl": 91.7}},
			{32 << 20, 141.7, map[string]float64{"nccl": 156.2}},
			{64 << 20, 251.3, map[string]float64{"nccl": 267.6}},
			{128 << 20, 414.3, map[string]float64{"nccl": 491.4}},
			{256 << 20, 769.9, map[string]float64{"nccl": 917.0}},
		},
		coll.Allgather: {
			{16 << 10, 18.7, map[string]float64{"nccl": 19.6, "cuda": 33.0}},
			{32 << 10, 18.6, map[string]float64{"nccl": 20.3, "cuda": 32.2}},
			{64 << 10, 19.9, map[string]float64{"nccl": 20.0, "cuda": 31.6}},
			{128 << 10, 22.2, map[string]float64{"nccl": 20.7, "cuda": 33.0}},
			{256 << 10, 22.9, map[string]float64{"nccl": 21.9, "cuda": 34.2}},
			{512 << 10, 26.6, map[string]float64{"nccl": 24.0, "cuda": 35.2}},
			{1 << 20, 28.3, map[string]float64{"nccl": 30.8, "cuda": 58.0}},
			{2 << 20, 34.2, map[string]float64{"nccl": 39.3, "cuda": 99.8}},
			{4 << 20, 39.1, map[string]float64{"nccl": 48.5, "cuda": 181.9}},
			{8 << 20, 56.4, map[string]float64{"nccl": 66.2, "cuda": 353.5}},
			{16 << 20, 90.2, map[string]float64{"nccl": 103.1, "cuda": 670.9}},
			{32 << 20, 146.4, map[string]float64{"nccl": 170.1, "cuda": 1405.2}},
			{64 << 20, 236.6, map[string]float64{"nccl": 300.0, "cuda": 2877.2}},
			{128 << 20, 421.9, map[string]float64{"nccl": 557.6, "cuda": 5769.4}},
			{256 << 20, 762.9, map[string]float64{"nccl": 1063.0, "cuda": 11411.3}},
		},
		coll.ReduceScatter: {
			{16 << 10, 19.5, map[string]float64{"nccl": 21.1, "cuda": 29.2}},
			{32 << 10, 20.1, map[string]float64{"nccl": 20.8, "cuda": 29.2}},
			{64 << 10, 21.9, map[string]float64{"nccl": 20.8, "cuda": 29.3}},
			{128 << 10, 21.2, map[string]float64{"nccl": 22.0, "cuda": 29.2}},
			{256 << 10, 20.8, map[string]float64{"nccl": 22.7, "cuda": 29.2}},
			{512 << 10, 24.8, map[string]float64{"nccl": 25.2, "cuda": 31.0}},
			{1 << 20, 26.7, map[string]float64{"nccl": 29.8, "cuda": 50.9}},
			{2 << 20, 34.5, map[string]float64{"nccl": 38.9, "cuda": 86.4}},
			{4 << 20, 40.1, map[string]float64{"nccl": 47.7, "cuda": 160.8}},
			{8 << 20, 56.6, map[string]float64{"nccl": 65.9, "cuda": 313.9}},
			{16 << 20, 84.0, map[string]float64{"nccl": 103.9, "cuda": 651.5}},
			{32 << 20, 145.9, map[string]float64{"nccl": 174.5, "cuda": 1315.3}},
			{64 << 20, 272.2, map[string]float64{"nccl": 313.5, "cuda": 2578.7}},
			{128 << 20, 472.8, map[string]float64{"nccl": 574.4, "cuda": 5162.4}},
			{256 << 20, 874.0, map[string]float64{"nccl": 1069.1, "cuda": 10389.9}},
		},
	},
}, {
	// docs/gpu.md "On four H200s" (08:33 UTC, every layer) and the
	// allreduce and reduce_scatter in pieces after it (08:45 and 08:59
	// UTC), 4 processes on 4 H200 over NVSwitch, 2026-11-28: the sizes
	// the first run timed for every layer; goring's slower time where two
	// runs had the size, each peer's faster, so that a claim holds on
	// either day. The reduce_scatter rows of 64 KiB and 1 MiB are left
	// out: NCCL's times there (150.9 and 106.9 µs, against 21-26 in the
	// rows beside them) were outliers of the one run that timed them, and
	// the row below decides those sizes instead.
	gpu: "NVIDIA H200", ranks: 4,
	rows: map[coll.Collective][]nodeRow{
		coll.Allreduce: {
			{16 << 10, 25.1, map[string]float64{"nccl": 25.2}},
			{64 << 10, 26.2, map[string]float64{"nccl": 23.8}},
			{256 << 10, 27.8, map[string]float64{"nccl": 24.9}},
			{1 << 20, 38.3, map[string]float64{"nccl": 33.1}},
			{4 << 20, 56.8, map[string]float64{"nccl": 54.3}},
			{16 << 20, 121.6, map[string]float64{"nccl": 112.0}},
			{64 << 20, 379.6, map[string]float64{"nccl": 337.1}},
			{256 << 20, 1883.7, map[string]float64{"nccl": 1201.9}},
		},
		coll.Allgather: {
			{16 << 10, 24.1, map[string]float64{"nccl": 22.4, "cuda": 38.8}},
			{64 << 10, 25.9, map[string]float64{"nccl": 22.3, "cuda": 38.2}},
			{256 << 10, 28.3, map[string]float64{"nccl": 26.2, "cuda": 36.6}},
			{1 << 20, 38.0, map[string]float64{"nccl": 49.5, "cuda": 105.9}},
			{4 << 20, 77.2, map[string]float64{"nccl": 77.3, "cuda": 367.6}},
			{16 << 20, 215.6, map[string]float64{"nccl": 196.9, "cuda": 1456.6}},
			{64 << 20, 653.0, map[string]float64{"nccl": 673.4, "cuda": 5600.6}},
			{256 << 20, 2232.2, map[string]float64{"nccl": 2482.7, "cuda": 21883.8}},
		},
		coll.ReduceScatter: {
			{16 << 10, 28.5, map[string]float64{"nccl": 21.6, "cuda": 32.9}},
			{256 << 10, 30.5, map[string]float64{"nccl": 25.8, "cuda": 33.5}},
			{4 << 20, 69.8, map[string]float64{"nccl": 71.4, "cuda": 331.7}},
			{16 << 20, 210.1, map[string]float64{"nccl": 198.5, "cuda": 1353.6}},
			{64 << 20, 835.5, map[string]float64{"nccl": 675.4, "cuda": 5082.4}},
			{256 << 20, 2945.2, map[string]float64{"nccl": 2498.3, "cuda": 20384.1}},
		},
	},
}}

// nodeClaimMargin is how much faster goring must have been than a layer
// to claim a size from it: run-to-run spread through UCC was a few
// percent.
const nodeClaimMargin = 0.95

// NodeClaims is the score string of the CUDA calls goring claims on a
// team of ranks ranks on one host whose GPU is named gpu, a GPU each or
// all on one (shared), given the layers of the UCC context (UCC's names:
// "ucp", "nccl", "cuda", ...); "" where no measured table fits. own, the
// machine's own claims file (nil: none), decides where it fits the team;
// else a table shipped for such a machine. A row decides from its size
// (the first from 0) up to the next row's, the last up to twice its size:
// beyond the table nothing is claimed.
func NodeClaims(gpu string, ranks int, shared bool, layers []string, own *ClaimsFile) string {
	t := findNodeTable(gpu, ranks, shared)
	if own.fits(gpu, ranks, shared) {
		t = own.table()
	}
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
		if len(rows) == 0 {
			continue
		}
		pts := make([]Point, len(rows)+1)
		for i, r := range rows {
			pts[i] = Point{Bytes: r.bytes, Claimed: fasterThanDefault(r, present)}
		}
		pts[len(rows)] = Point{Bytes: 2 * rows[len(rows)-1].bytes} // the end of the table
		if s, err := TuneString(c, "cuda", ranks, Ranges(pts), NodeClaimScore); err == nil && s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "#")
}

// WithNodeClaims adds the measured claims (NodeClaims) to the model's
// score string and summary the way the team layer applies them: after a
// '|', so that they override the model's where both speak. ok says
// whether a measured table fitted the team; the summary says which
// (ownName names own, the machine's claims file).
func WithNodeClaims(str, summary, gpu string, ranks int, shared bool, layers []string, own *ClaimsFile, ownName string) (string, string, bool) {
	nc := NodeClaims(gpu, ranks, shared, layers, own)
	if nc == "" {
		return str, summary, false
	}
	from := "measured on " + gpu
	if own.fits(gpu, ranks, shared) {
		from = "measured on this machine (" + ownName + ")"
	}
	return str + "|" + nc, summary + "; " + from + ": " + nc, true
}

// uccDefaultScores are UCC 1.8's default scores of its GPU layers, in
// the order UCC prefers them.
var uccDefaultScores = []struct {
	layer string
	score int
}{{"cuda", 40}, {"nccl", 20}}

// fasterThanDefault says whether goring beat the layer UCC would run
// this row's call on: the first present layer of uccDefaultScores with a
// time for it (tl/cuda has no allreduce without NVLS). Where none is
// present UCC would run tl/ucp: goring claims where it beat tl/ucp's time
// if the table has one, and, if not, everywhere (goring's GPU paths beat
// tl/ucp at every size measured, docs/gpu.md).
func fasterThanDefault(r nodeRow, present map[string]bool) bool {
	for _, l := range uccDefaultScores {
		if us := r.peers[l.layer]; present[l.layer] && us > 0 {
			return r.goring <= nodeClaimMargin*us
		}
	}
	// tl/ucp, where a table timed it (a claims file may).
	if us := r.peers["ucp"]; present["ucp"] && us > 0 {
		return r.goring <= nodeClaimMargin*us
	}
	return true
}

func findNodeTable(gpu string, ranks int, shared bool) *nodeTable {
	for _, ts := range [][]nodeTable{nodeTables, sharedTables} {
		for i := range ts {
			if t := &ts[i]; t.ranks == ranks && t.shared == shared && gpu == t.gpu {
				return t
			}
		}
	}
	return nil
}
