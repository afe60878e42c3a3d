package sched

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// rewrite regenerates the golden transcripts:
//
//	go test ./sched -run Golden -rewrite
var rewrite = flag.Bool("rewrite", false, "rewrite sched/testdata golden transcripts")

// goldenCases are small plans whose full program JSON and verification
// summary are saved in testdata/NAME.golden. A change to a generator shows
// up as a readable diff of steps.
var goldenCases = []struct {
	name string
	spec func() Spec
}{
	{"allgather_ring_2x2", func() Spec {
		return Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: topo.SweepShape(2, 2), Bytes: 8, DtypeBytes: 4}
	}},
	{"allgather_ring_1x2_chunks2", func() Spec {
		return Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: topo.SweepShape(1, 2), Bytes: 12, DtypeBytes: 4, Chunks: 2}
	}},
	{"allgather_neighbor_1x4", func() Spec {
		return Spec{Collective: coll.Allgather, Algorithm: "neighbor", Topo: topo.SweepShape(1, 4), Bytes: 4, DtypeBytes: 4}
	}},
	{"allgather_recursive_doubling_2x2", func() Spec {
		return Spec{Collective: coll.Allgather, Algorithm: "recursive_doubling", Topo: topo.SweepShape(2, 2), Bytes: 4, DtypeBytes: 4}
	}},
	{"allgather_bruck_1x3", func() Spec {
		return Spec{Collective: coll.Allgather, Algorithm: "bruck", Topo: topo.SweepShape(1, 3), Bytes: 4, DtypeBytes: 4}
	}},
	{"reduce_scatter_ring_1x3", func() Spec {
		return Spec{Collective: coll.ReduceScatter, Algorithm: "ring", Topo: topo.SweepShape(1, 3), Bytes: 8, DtypeBytes: 4}
	}},
	{"allreduce_ring_1x3", func() Spec {
		return Spec{Collective: coll.Allreduce, Algorithm: "ring", Topo: topo.SweepShape(1, 3), Bytes: 20, DtypeBytes: 4}
	}},
	{"allreduce_rabenseifner_1x3", func() Spec {
		return Spec{Collective: coll.Allreduce, Algorithm: "rabenseifner", Topo: topo.SweepShape(1, 3), Bytes: 16, DtypeBytes: 4}
	}},
	{"alltoallv_pairwise_1x3", func() Spec {
		return Spec{Collective: coll.Alltoallv, Algorithm: "pairwise", Topo: topo.SweepShape(1, 3), DtypeBytes: 4,
			Counts: [][]int64{{4, 8, 0}, {0, 4, 12}, {16, 0, 4}}}
	}},
	{"bcast_knomial_1x6_root2", func() Spec {
		return Spec{Collective: coll.Bcast, Algorithm: "knomial", Topo: topo.SweepShape(1, 6), Bytes: 8, DtypeBytes: 4, Root: 2}
	}},
	{"allgather_multiwrite_2x2", func() Spec {
		return Spec{Collective: coll.Allgather, Algorithm: "multiwrite", Topo: topo.SweepShape(2, 2), Bytes: 8, DtypeBytes: 4}
	}},
	{"bcast_multiwrite_2x3_root4_chunks2", func() Spec {
		return Spec{Collective: coll.Bcast, Algorithm: "multiwrite", Topo: topo.SweepShape(2, 3), Bytes: 8, DtypeBytes: 4, Root: 4, Chunks: 2}
	}},
}

func TestGoldenTranscripts(t *testing.T) {
	for i, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			plan, rep := mustVerify(t, c.spec())
			var got bytes.Buffer
			require.NoError(t, WriteProgram(&got, plan))
			got.WriteString("--- verification\n")
			got.WriteString(rep.String())
			path := filepath.Join("testdata", c.name+".golden")
			if *rewrite {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(path, got.Bytes(), 0o644))
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "case %d: missing golden file; run go test ./sched -run Golden -rewrite", i)
			require.Equal(t, string(want), got.String(), "case %d (%s) differs from its golden transcript; if the change is intended, rerun with -rewrite and review the diff", i, path)
		})
	}
}
