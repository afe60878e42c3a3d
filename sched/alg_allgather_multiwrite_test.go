package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// MultiWrite, sections 3.2 and 5.2: the multiwrite allgather is correct over
// the grid, and its inter-node transfers are exactly one per (block,
// remote node): every node's rails carry each block once.
func TestAllgatherMultiwriteGrid(t *testing.T) {
	verifyGrid(t, coll.Allgather, "multiwrite", nil, func(t *testing.T, g gridCase, plan *Plan, rep *Report) {
		P, N := g.nodes*g.gpus, g.nodes
		var inter, intra int64
		for r := range plan.Ranks {
			for _, s := range plan.Ranks[r].Steps {
				if s.Op != OpSend {
					continue
				}
				if plan.Ranks[s.Peer].Node != plan.Ranks[r].Node {
					assert.Equal(t, PathRail, s.Path.Kind, "rank %d: inter-node send without a rail hint", r)
					assert.Equal(t, plan.Ranks[r].Local, plan.Ranks[s.Peer].Local, "rank %d: relay is not the same-index GPU", r)
					inter += s.Len
				} else {
					intra += s.Len
				}
			}
		}
		B := g.bytes
		assert.Equal(t, int64(P*(N-1))*B, inter, "each block crosses into each remote node once")
		assert.Equal(t, int64(P*N*(g.gpus-1))*B, intra, "each block reaches every other GPU of every node once inside the node")
		for _, r := range plan.Ranks {
			assert.Zero(t, r.Sizes.Scratch)
		}
	})
}

// GenerateRank builds one rank's multiwrite program without the others',
// and it is exactly the program Generate gives that rank.
func TestMultiwriteGenerateRankMatchesGenerate(t *testing.T) {
	for i, c := range []struct {
		coll        coll.Collective
		nodes, gpus int
		chunks      int
	}{{coll.Allgather, 3, 2, 2}, {coll.Allgather, 2, 4, 0}, {coll.Bcast, 3, 2, 3}, {coll.Bcast, 1, 5, 0}} {
		tp := topo.SweepShape(c.nodes, c.gpus)
		spec := Spec{Collective: c.coll, Algorithm: "multiwrite", Topo: tp, Bytes: 64, DtypeBytes: 4, Chunks: c.chunks, Root: 1}
		full, err := Generate(spec)
		require.NoError(t, err)
		for r := 0; r < tp.NumGPUs(); r++ {
			one, err := GenerateRank(spec, r)
			require.NoError(t, err)
			assert.Equal(t, full.Ranks[r].Steps, one.Ranks[r].Steps, "case %d rank %d", i, r)
			assert.Equal(t, full.Ranks[r].Sizes, one.Ranks[r].Sizes, "case %d rank %d", i, r)
			for id := range full.Ranks[r].Steps {
				assert.Equal(t, full.Ranks[r].Deps(id), one.Ranks[r].Deps(id), "case %d rank %d step %d", i, r, id)
			}
		}
	}
}
