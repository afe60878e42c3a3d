package sched

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// intraEdges generates the stage-1 exchange of a single 4-GPU node and
// returns, per tag kind, the "from->to" pairs of its sends, sorted. With one
// node, one piece and phase 0 the tag is the kind itself.
func intraEdges(t *testing.T, tp *topo.Topology, intra string) map[int][]string {
	t.Helper()
	plan, _ := mustVerify(t, Spec{Collective: coll.Allgather, Algorithm: "parallel_rings", Intra: intra, Topo: tp, Bytes: 64, DtypeBytes: 4})
	out := map[int][]string{}
	for _, rp := range plan.Ranks {
		for _, s := range rp.Steps {
			if s.Op == OpSend {
				out[int(s.Tag)] = append(out[int(s.Tag)], fmt.Sprintf("%d->%d", rp.Rank, s.Peer))
			}
		}
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}

// Parallel Rings, Table I: the intra-node algorithms move blocks between the four
// GPUs of an inter-socket node (cluster A) in exactly the table's pairs.
// Tree broadcasts use one kind per root (kind 1+root); the other algorithms
// one kind per step.
func TestIntraAlgorithmsFollowTableI(t *testing.T) {
	clusterA, err := topo.Preset("clusterA")
	require.NoError(t, err)
	cases := []struct {
		intra string
		want  map[int][]string
	}{
		// Proposed: NVLink pair, virtual ring 0->2->1->3->0, NVLink pair.
		{"congestion_aware", map[int][]string{
			1: {"0->1", "1->0", "2->3", "3->2"},
			2: {"0->2", "1->3", "2->1", "3->0"},
			3: {"0->1", "1->0", "2->3", "3->2"},
		}},
		// RD: NVLink peers first, then across the sockets.
		{"rd", map[int][]string{
			2: {"0->1", "1->0", "2->3", "3->2"},
			3: {"0->2", "1->3", "2->0", "3->1"},
		}},
		// BTDD trees of roots 0, 2, 3 (steps 1 and 2 of the table); root 1's
		// first step 1->0 is the table's, its second step is read as the
		// same tree shape: 1->2 and 0->3.
		{"btdd", map[int][]string{
			1: {"0->1", "0->2", "1->3"},
			2: {"0->3", "1->0", "1->2"},
			3: {"1->3", "2->0", "2->1"},
			4: {"1->0", "3->1", "3->2"},
		}},
		// BTDDH: first step 0->2, 1->3, 2->0, 3->1 (congestion-free).
		{"btddh", map[int][]string{
			1: {"0->1", "0->2", "2->3"},
			2: {"1->2", "1->3", "3->0"},
			3: {"0->1", "2->0", "2->3"},
			4: {"1->2", "3->0", "3->1"},
		}},
		// K-nomial with K = 4 and Linear: every root sends to the three others.
		{"knomial", map[int][]string{
			1: {"0->1", "0->2", "0->3"},
			2: {"1->0", "1->2", "1->3"},
			3: {"2->0", "2->1", "2->3"},
			4: {"3->0", "3->1", "3->2"},
		}},
		// Iallgather Linear, step by step: step 1 is the incast at GPU 0.
		{"iallgather_linear", map[int][]string{
			2: {"0->1", "1->0", "2->0", "3->0"},
			3: {"0->2", "1->2", "2->1", "3->1"},
			4: {"0->3", "1->3", "2->3", "3->2"},
		}},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("case%d_%s", i, c.intra), func(t *testing.T) {
			assert.Equal(t, c.want, intraEdges(t, clusterA, c.intra))
		})
	}
}

// Generalised congestion-aware algorithm (Parallel Rings III-C): on a node of M
// NVLink pairs every GPU sends each of its blocks across pairs once per
// round, and in no round does a GPU receive two blocks from other pairs.
func TestCongestionAwareRoundsAreIncastFree(t *testing.T) {
	for i, g := range []int{2, 4, 6, 8} {
		t.Run(fmt.Sprintf("case%d_%dgpus", i, g), func(t *testing.T) {
			tp := pairTopo(1, g)
			edges := intraEdges(t, tp, "congestion_aware")
			M := g / 2
			// Kinds 1 (phase 1), 2..M (phase-2 rounds), M+1..2M-1 (phase 3).
			for k, pairs := range edges {
				recvs := map[string]int{}
				for _, e := range pairs {
					var from, to int
					fmt.Sscanf(e, "%d->%d", &from, &to)
					recvs[fmt.Sprint(to)]++
					if k == 1 || k > M {
						assert.Equal(t, from^1, to, "phase 1 and 3 stay on the NVLink pair: %s", e)
					}
				}
				for to, n := range recvs {
					assert.Equal(t, 1, n, "kind %d: GPU %s receives %d blocks at once", k, to, n)
				}
				assert.Len(t, pairs, g)
			}
			assert.Len(t, edges, 1+2*(M-1))
		})
	}
}

// Parallel Rings, section V-A with the congestion-aware allgather half: the
// parallel_rings allreduce and reduce_scatter on cluster A and synthetic
// 2-socket nodes.
func TestParallelRingsReductionsOnSocketPairs(t *testing.T) {
	clusterA, err := topo.Preset("clusterA")
	require.NoError(t, err)
	var tps []*topo.Topology
	for _, n := range []int{1, 4} {
		tp, err := clusterA.Repeat(n)
		require.NoError(t, err)
		tps = append(tps, tp)
	}
	for _, g := range []int{2, 6, 8} {
		tps = append(tps, pairTopo(3, g))
	}
	i := 0
	for _, tp := range tps {
		for _, cl := range []coll.Collective{coll.Allreduce, coll.ReduceScatter} {
			for _, elems := range []int64{1, 999} {
				i++
				t.Run(fmt.Sprintf("case%d_%s_%s_%d", i, cl, tp.Name, elems), func(t *testing.T) {
					mustVerify(t, Spec{Collective: cl, Algorithm: "parallel_rings", Topo: tp, Bytes: 4 * elems, DtypeBytes: 4, Chunks: i % 3})
				})
			}
		}
	}
}

// "auto" says which intra-node algorithm it chose (Parallel Rings III-B/C).
func TestIntraAutoNote(t *testing.T) {
	clusterA, err := topo.Preset("clusterA")
	require.NoError(t, err)
	for i, c := range []struct {
		tp   *topo.Topology
		want string
	}{{clusterA, "intra: auto chose congestion_aware"}, {topo.SweepShape(2, 4), "intra: auto chose linear"}} {
		plan, err := Generate(Spec{Collective: coll.Allgather, Algorithm: "parallel_rings", Topo: c.tp, Bytes: 8, DtypeBytes: 4})
		require.NoError(t, err, "case %d", i)
		assert.Equal(t, c.want, plan.Note, "case %d", i)
	}
}

// FuzzHierarchical: the hierarchical generators (parallel_rings allgather,
// reduce_scatter and allreduce with every intra-node variant, lane
// allreduce) on full-mesh and socket-pair nodes (1-64 nodes, 1-8 GPUs), odd
// sizes and chunk counts either verify or are refused with an
// *UnsupportedError (congestion_aware on a node that does not pair up).
func FuzzHierarchical(f *testing.F) {
	f.Add(uint8(0), uint8(3), uint8(3), uint32(7), uint8(2), uint8(1), uint8(0))
	f.Add(uint8(6), uint8(1), uint8(5), uint32(1), uint8(3), uint8(4), uint8(1))
	f.Add(uint8(5), uint8(15), uint8(7), uint32(1000), uint8(0), uint8(3), uint8(2))
	f.Add(uint8(6), uint8(40), uint8(2), uint32(33), uint8(1), uint8(0), uint8(3))
	f.Fuzz(func(t *testing.T, intraSel, nodes8, gpus8 uint8, elems uint32, dsel, chunks8, which uint8) {
		intras := IntraAlgorithms()
		intra := intras[int(intraSel)%len(intras)]
		nodes, gpus := int(nodes8)%64+1, int(gpus8)%8+1
		tp := topo.SweepShape(nodes, gpus)
		if intraSel&0x80 != 0 || intra == "congestion_aware" {
			tp = pairTopo(nodes, gpus+gpus%2) // socket pairs need an even GPU count
		}
		dtype := []int{1, 2, 4, 8}[int(dsel)%4]
		spec := Spec{Algorithm: "parallel_rings", Intra: intra, Topo: tp,
			Bytes: int64(elems%2048+1) * int64(dtype), DtypeBytes: dtype, Chunks: int(chunks8 % 5)}
		switch which % 4 {
		case 0:
			spec.Collective = coll.Allgather
		case 1:
			spec.Collective = coll.Allreduce
		case 2:
			spec.Collective, spec.Intra = coll.ReduceScatter, ""
		case 3:
			spec.Collective, spec.Algorithm, spec.Intra = coll.Allreduce, "lane", ""
		}
		plan, err := Generate(spec)
		if err != nil {
			if !IsUnsupported(err) {
				t.Fatalf("%s/%s intra %s on %s: %v", spec.Collective, spec.Algorithm, spec.Intra, tp.Name, err)
			}
			return
		}
		if _, err := Verify(plan); err != nil {
			t.Fatalf("%s/%s intra %s on %s, %d bytes, dtype %d, chunks %d: %v", spec.Collective, spec.Algorithm, spec.Intra, tp.Name, spec.Bytes, dtype, spec.Chunks, err)
		}
	})
}
