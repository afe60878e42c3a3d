package sched

import (
	"testing"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// TestRailHintIsSendersRail pins what the testbed's rail transport
// (ucx_mp.Rails) relies on: a send that crosses nodes with a rail hint
// names the sender's own rail (GPU i owns rail i, as Parallel Rings III-A,
// Multi-lane Alg. 2 and NIMBLE's rail-matched paths have it), so a
// receiver knows which rail a message from a peer arrives on without
// reading the peer's program.
func TestRailHintIsSendersRail(t *testing.T) {
	for _, shape := range [][2]int{{2, 2}, {4, 4}, {3, 2}} {
		tp, err := topo.Synthetic("t", shape[0], shape[1], 1)
		if err != nil {
			t.Fatal(err)
		}
		n := tp.NumGPUs()
		for _, c := range []coll.Collective{coll.Allgather, coll.Allreduce, coll.ReduceScatter, coll.Alltoallv, coll.Bcast} {
			for _, a := range Algorithms(c) {
				spec := Spec{Collective: c, Algorithm: a.Name, Topo: tp, Bytes: 1 << 20, DtypeBytes: 4}
				if c == coll.Alltoallv {
					spec.Counts, spec.DtypeBytes = hotCounts(n, 1<<20), 1
				}
				plan, err := Generate(spec)
				if IsUnsupported(err) {
					continue
				}
				if err != nil {
					t.Fatalf("%v %s %v: %v", shape, a.Name, c, err)
				}
				for _, rp := range plan.Ranks {
					own := tp.Nodes[rp.Node].GPUs[rp.Local].Rail
					for _, s := range rp.Steps {
						if s.Op != OpSend || s.Path.Kind != PathRail || plan.Ranks[s.Peer].Node == rp.Node {
							continue
						}
						if int(s.Path.Index) != own {
							t.Errorf("%v %v/%s: rank %d sends to rank %d on rail %d, its own is %d", shape, c, a.Name, rp.Rank, s.Peer, s.Path.Index, own)
						}
					}
				}
			}
		}
	}
}

// hotCounts sends rank 0 70% of every rank's bytes (as --hot 0:0.7).
func hotCounts(n int, bytes int64) [][]int64 {
	m := make([][]int64, n)
	for i := range m {
		m[i] = make([]int64, n)
		for j := range m[i] {
			if j == 0 {
				m[i][j] = bytes * 7 / 10
			} else {
				m[i][j] = bytes * 3 / 10 / int64(n-1)
			}
		}
	}
	return m
}
