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
// GPU: the inter-socket shape of seed 000 Fig. 2b, generalised.
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

// Seed 000 section III, Algorithm 1: parallel_rings allgather with every
// full-mesh intra-node variant verifies over nodes 1-16 x GPUs 1-8 and sizes
// from one element to 64 MiB.
func TestParallelRingsAllgatherVerifies(t *testing.T) {
	for i, c := range sampleGrid() {
		intra := fullMeshIntras[i%len(fullMeshIntras)]
		t.Run(fmt.Sprintf("case%d_%dx%d_%dB_d%d_k%d_%s", i, c.nodes, c.gpus, c.bytes, c.dtype, c.chunks, intra), func(t *testing.T) {
			spec := Spec{Collective: coll.Allgather, Algorithm: "parallel_rings", Intra: intra, Topo: synthTopo(c.nodes, c.gpus), Bytes: c.bytes, DtypeBytes: c.dtype, Chunks: c.chunks}
			_, rep := mustVerify(t, spec)
			if c.nodes > 1 {
				assert.Equal(t, c.nodes-1, rep.CriticalInterNode, "inter-node steps on the critical path")
			}
		})
	}
}

// Every intra-node variant on every node size 1-8 (seed 000 Table I).
func TestParallelRingsAllgatherIntraVariants(t *testing.T) {
	i := 0
	for _, intra := range fullMeshIntras {
		for g := 1; g <= 8; g++ {
			for _, nodes := range []int{1, 3} {
				i++
				elems := int64(1 + (i*7)%13)
				t.Run(fmt.Sprintf("case%d_%s_%dx%d", i, intra, nodes, g), func(t *testing.T) {
					spec := Spec{Collective: coll.Allgather, Algorithm: "parallel_rings", Intra: intra, Topo: synthTopo(nodes, g), Bytes: 4 * elems, DtypeBytes: 4, Chunks: i % 3}
					mustVerify(t, spec)
				})
			}
		}
	}
}

// Seed 000 section III-C, Algorithm 2: the congestion-aware variant on
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
