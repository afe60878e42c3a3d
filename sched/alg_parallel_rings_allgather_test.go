package sched

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// pairTopo builds nodes 2-socket nodes of gpus GPUs (gpus even): GPUs
// 0..gpus/2-1 on socket 0, the rest on socket 1, NVLink only between GPUs
// 2k and 2k+1 (for 2 and 6 GPUs one pair spans the sockets), one rail per
// GPU: the inter-socket shape of Parallel Rings Fig. 2b, generalised.
func pairTopo(nodes, gpus int) *topo.Topology {
	t := &topo.Topology{Schema: topo.Schema, Name: fmt.Sprintf("pairs%dx%d", nodes, gpus)}
	for r := 0; r < gpus; r++ {
		t.Rails = append(t.Rails, topo.Rail{Index: r, AlphaUS: 2, BetaGBps: 12.5})
	}
	for i := 0; i < nodes; i++ {
		n := topo.Node{Name: fmt.Sprintf("node%d", i), Sockets: 2}
		for g := 0; g < gpus; g++ {
			sock := g * 2 / gpus
			n.GPUs = append(n.GPUs, topo.GPU{Index: g, Socket: sock, NUMA: sock, Rail: g})
			n.NICs = append(n.NICs, topo.NICPort{Index: g, Socket: sock})
			n.Links = append(n.Links, topo.Link{Kind: topo.PCIe, A: topo.GPUEndpoint(g), B: topo.HostEndpoint(sock), Count: 1, AlphaUS: 1, BetaGBps: 25, FullDuplex: true})
		}
		for g := 0; g+1 < gpus; g += 2 {
			n.Links = append(n.Links, topo.Link{Kind: topo.NVLink, A: topo.GPUEndpoint(g), B: topo.GPUEndpoint(g + 1), Count: 4, AlphaUS: 1, BetaGBps: 25, FullDuplex: true})
		}
		n.Links = append(n.Links, topo.Link{Kind: topo.UPI, A: topo.HostEndpoint(0), B: topo.HostEndpoint(1), Count: 3, AlphaUS: 1, BetaGBps: 22.4, FullDuplex: true})
		t.Nodes = append(t.Nodes, n)
	}
	return t
}

var fullMeshIntras = []string{"auto", "linear", "btdd", "btddh", "knomial", "iallgather_linear", "rd"}

// Parallel Rings, section III, Algorithm 1: parallel_rings allgather with every
// full-mesh intra-node variant verifies over nodes 1-16 x GPUs 1-8 and sizes
// from one element to 64 MiB.
func TestParallelRingsAllgatherVerifies(t *testing.T) {
	for i, c := range sampleGrid() {
		intra := fullMeshIntras[i%len(fullMeshIntras)]
		t.Run(fmt.Sprintf("case%d_%dx%d_%dB_d%d_k%d_%s", i, c.nodes, c.gpus, c.bytes, c.dtype, c.chunks, intra), func(t *testing.T) {
			spec := Spec{Collective: coll.Allgather, Algorithm: "parallel_rings", Intra: intra, Topo: topo.SweepShape(c.nodes, c.gpus), Bytes: c.bytes, DtypeBytes: c.dtype, Chunks: c.chunks}
			_, rep := mustVerify(t, spec)
			if c.nodes > 1 {
				assert.Equal(t, c.nodes-1, rep.CriticalInterNode, "inter-node steps on the critical path")
			}
		})
	}
}

// Every intra-node variant on every node size 1-8 (Parallel Rings Table I).
func TestParallelRingsAllgatherIntraVariants(t *testing.T) {
	i := 0
	for _, intra := range fullMeshIntras {
		for g := 1; g <= 8; g++ {
			for _, nodes := range []int{1, 3} {
				i++
				elems := int64(1 + (i*7)%13)
				t.Run(fmt.Sprintf("case%d_%s_%dx%d", i, intra, nodes, g), func(t *testing.T) {
					spec := Spec{Collective: coll.Allgather, Algorithm: "parallel_rings", Intra: intra, Topo: topo.SweepShape(nodes, g), Bytes: 4 * elems, DtypeBytes: 4, Chunks: i % 3}
					mustVerify(t, spec)
				})
			}
		}
	}
}

// Parallel Rings, section III-C, Algorithm 2: the congestion-aware variant on
// cluster A nodes and on synthetic 2-socket nodes of 2, 4, 6 and 8 GPUs.
func TestParallelRingsAllgatherCongestionAware(t *testing.T) {
	clusterA, err := topo.Preset("clusterA")
	require.NoError(t, err)
	type tc struct {
		tp     *topo.Topology
		bytes  int64
		chunks int
	}
	var cases []tc
	for _, n := range []int{1, 2, 4, 5} {
		tp, err := clusterA.Repeat(n)
		require.NoError(t, err)
		cases = append(cases, tc{tp, 4 << 20, 0}, tc{tp, 12, 2})
	}
	for _, g := range []int{2, 4, 6, 8} {
		for _, n := range []int{1, 2, 3, 16} {
			cases = append(cases, tc{pairTopo(n, g), 4 * 1001, n % 3}, tc{pairTopo(n, g), 2, 0})
		}
	}
	for i, c := range cases {
		for _, intra := range []string{"congestion_aware", "auto"} {
			t.Run(fmt.Sprintf("case%d_%s_%s_%dB", i, intra, c.tp.Name, c.bytes), func(t *testing.T) {
				spec := Spec{Collective: coll.Allgather, Algorithm: "parallel_rings", Intra: intra, Topo: c.tp, Bytes: c.bytes, DtypeBytes: 2, Chunks: c.chunks}
				_, rep := mustVerify(t, spec)
				if n := c.tp.NumNodes(); n > 1 {
					assert.Equal(t, n-1, rep.CriticalInterNode)
				}
			})
		}
	}
}

// Parallel Rings, section III (item 3, "Scalable"): on cluster B (4 GPUs and 4
// HCAs per node) the flat ring has P-1 inter-node transfers on its critical
// path, Parallel Rings P/HCA - 1 = nodes - 1 (15 instead of 63 for P = 64).
func TestParallelRingsCriticalPathClusterB(t *testing.T) {
	clusterB, err := topo.Preset("clusterB")
	require.NoError(t, err)
	rails := len(clusterB.Rails)
	require.Equal(t, 4, rails)
	for i, P := range []int{16, 32, 64} {
		tp, err := clusterB.Repeat(P / 4)
		require.NoError(t, err)
		for _, c := range []struct {
			alg  string
			want int
		}{{"ring", P - 1}, {"parallel_rings", P/rails - 1}} {
			t.Run(fmt.Sprintf("case%d_P%d_%s", i, P, c.alg), func(t *testing.T) {
				spec := Spec{Collective: coll.Allgather, Algorithm: c.alg, Topo: tp, Bytes: 1 << 20, DtypeBytes: 4}
				_, rep := mustVerify(t, spec)
				assert.Equal(t, c.want, rep.CriticalInterNode)
			})
		}
	}
}

// Every ring send of parallel_rings carries the rail of the sending GPU,
// and only same-local-index GPUs talk across nodes (Parallel Rings III-A).
func TestParallelRingsRailHints(t *testing.T) {
	clusterB, err := topo.Preset("clusterB")
	require.NoError(t, err)
	tp, err := clusterB.Repeat(4)
	require.NoError(t, err)
	plan, rep := mustVerify(t, Spec{Collective: coll.Allgather, Algorithm: "parallel_rings", Topo: tp, Bytes: 4096, DtypeBytes: 4, Chunks: 2})
	inter := 0
	for _, rp := range plan.Ranks {
		for _, s := range rp.Steps {
			if s.Op != OpSend || plan.Ranks[s.Peer].Node == rp.Node {
				continue
			}
			inter++
			assert.Equal(t, rp.Local, plan.Ranks[s.Peer].Local, "rank %d sends across nodes to another local index", rp.Rank)
			assert.Equal(t, Path{Kind: PathRail, Index: uint8(tp.Nodes[rp.Node].GPUs[rp.Local].Rail)}, s.Path)
		}
	}
	assert.Equal(t, rep.InterNodeTransfers, inter)
	assert.Equal(t, 16*3*2, inter) // 16 ranks x 3 ring hops x 2 pieces
}

// Intra-node variants that need a shape the node lacks are refused with the
// reason; auto picks linear on a full mesh and congestion_aware on socket
// pairs (Parallel Rings III-B, III-C).
func TestParallelRingsIntraSelection(t *testing.T) {
	clusterA, err := topo.Preset("clusterA")
	require.NoError(t, err)
	clusterB, err := topo.Preset("clusterB")
	require.NoError(t, err)
	dgx, err := topo.Preset("dgx-h100")
	require.NoError(t, err)
	assert.Equal(t, "congestion_aware", AutoIntra(clusterA))
	assert.Equal(t, "linear", AutoIntra(clusterB))
	assert.Equal(t, "linear", AutoIntra(dgx))
	assert.Equal(t, "congestion_aware", AutoIntra(pairTopo(1, 6)))
	assert.Equal(t, "linear", AutoIntra(topo.SweepShape(1, 1)))

	bad := []struct {
		tp    *topo.Topology
		intra string
		want  string
	}{
		{clusterB, "congestion_aware", "a GPU has NVLinks to more than one other GPU"},
		{dgx, "congestion_aware", "has no NVLink peer"},
		{topo.SweepShape(2, 3), "congestion_aware", "odd number of GPUs"},
		{clusterA, "tree", `unknown intra-node algorithm "tree"`},
	}
	for i, c := range bad {
		for _, cl := range []coll.Collective{coll.Allgather, coll.Allreduce} {
			t.Run(fmt.Sprintf("case%d_%s_%s", i, cl, c.intra), func(t *testing.T) {
				_, err := Generate(Spec{Collective: cl, Algorithm: "parallel_rings", Intra: c.intra, Topo: c.tp, Bytes: 64, DtypeBytes: 4})
				require.Error(t, err)
				assert.True(t, IsUnsupported(err))
				assert.Contains(t, err.Error(), c.want)
			})
		}
	}
	// Only one GPU per node: nothing to exchange inside, any variant works.
	mustVerify(t, Spec{Collective: coll.Allgather, Algorithm: "parallel_rings", Intra: "congestion_aware", Topo: topo.SweepShape(3, 1), Bytes: 8, DtypeBytes: 4})
}

// The hierarchical generators build each rank on its own (Algorithm.Rank)
// exactly as the whole-plan path does.
func TestHierarchicalGenerateRankMatches(t *testing.T) {
	clusterA, err := topo.Preset("clusterA")
	require.NoError(t, err)
	tpA, err := clusterA.Repeat(3)
	require.NoError(t, err)
	cases := []Spec{
		{Collective: coll.Allgather, Algorithm: "parallel_rings", Topo: tpA, Bytes: 44, DtypeBytes: 4, Chunks: 3},
		{Collective: coll.Allgather, Algorithm: "parallel_rings", Intra: "rd", Topo: topo.SweepShape(3, 6), Bytes: 6, DtypeBytes: 2, Chunks: 2},
		{Collective: coll.ReduceScatter, Algorithm: "parallel_rings", Topo: topo.SweepShape(3, 4), Bytes: 20, DtypeBytes: 4, Chunks: 2},
		{Collective: coll.Allreduce, Algorithm: "parallel_rings", Topo: tpA, Bytes: 4 * 37, DtypeBytes: 4, Chunks: 2},
		{Collective: coll.Allreduce, Algorithm: "lane", Topo: topo.SweepShape(3, 4), Bytes: 4 * 37, DtypeBytes: 4, Chunks: 2},
	}
	for i, spec := range cases {
		t.Run(fmt.Sprintf("case%d_%s_%s", i, spec.Collective, spec.Algorithm), func(t *testing.T) {
			full, rep := mustVerify(t, spec)
			assert.Greater(t, rep.Transfers, 0)
			for r := range full.Ranks {
				one, err := GenerateRank(spec, r)
				require.NoError(t, err)
				require.Equal(t, full.Ranks[r].Steps, one.Ranks[r].Steps, "rank %d", r)
				assert.Equal(t, full.Ranks[r].Sizes, one.Ranks[r].Sizes)
				for id := range full.Ranks[r].Steps {
					assert.Equal(t, full.Ranks[r].Deps(id), one.Ranks[r].Deps(id))
				}
				// The whole-plan path allocates exactly what it keeps.
				assert.Equal(t, len(full.Ranks[r].Steps), cap(full.Ranks[r].Steps))
			}
		})
	}
}
