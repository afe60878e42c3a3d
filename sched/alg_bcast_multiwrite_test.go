package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
)

// Seed 004 section 3.2: the multiwrite bcast is correct over the grid (the
// root is a middle rank, so it is rarely local 0), every remote node gets
// the message once over the root's rail, and the depth is two hops plus
// the root port's queue of copies and pieces.
func TestBcastMultiwriteGrid(t *testing.T) {
	verifyGrid(t, coll.Bcast, "multiwrite", nil, func(t *testing.T, g gridCase, plan *Plan, rep *Report) {
		root := plan.Root
		var railBytes int64
		for r := range plan.Ranks {
			for _, s := range plan.Ranks[r].Steps {
				if s.Op == OpSend && plan.Ranks[s.Peer].Node != plan.Ranks[r].Node {
					assert.Equal(t, root, r, "only the root sends across nodes")
					railBytes += s.Len
				}
			}
		}
		assert.Equal(t, int64(g.nodes-1)*g.bytes, railBytes)
		// Two hops. The root's copies to remote nodes share its NIC port and
		// go one after another, as do the pieces of one hop, so the last
		// piece to the last node ends a chain of (N-1)k transfers, then one
		// more inside that node.
		k := ChunkCount(g.bytes, g.chunks, g.dtype)
		assert.LessOrEqual(t, rep.CriticalTransfers, max(g.nodes-1, 1)*k+1, "depth")
	})
}
