package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
)

// MultiWrite, sections 3.2 and 4.3.3: the multiwrite bcast is correct over
// the grid (the root is a middle rank, so it is rarely local 0), every
// remote node gets the message once through same-index relays, the root's
// port sends one copy per level of the binomial tree over nodes, and no
// chain of transfers is longer than the rail copies and pieces it queues,
// plus one write inside a node.
func TestBcastMultiwriteGrid(t *testing.T) {
	verifyGrid(t, coll.Bcast, "multiwrite", nil, func(t *testing.T, g gridCase, plan *Plan, rep *Report) {
		root := plan.Root
		var railBytes, rootRailBytes int64
		for r := range plan.Ranks {
			for _, s := range plan.Ranks[r].Steps {
				if s.Op == OpSend && plan.Ranks[s.Peer].Node != plan.Ranks[r].Node {
					assert.Equal(t, plan.Ranks[root].Local, plan.Ranks[r].Local, "rank %d: relays keep the root's local index", r)
					assert.Equal(t, plan.Ranks[r].Local, plan.Ranks[s.Peer].Local, "rank %d: same-index relay", r)
					railBytes += s.Len
					if r == root {
						rootRailBytes += s.Len
					}
				}
			}
		}
		assert.Equal(t, int64(g.nodes-1)*g.bytes, railBytes, "every remote node receives the message once")
		assert.Equal(t, int64(ceilLog2(g.nodes))*g.bytes, rootRailBytes, "the root's port sends ceil(log2 N) copies (binomial over nodes)")
		// Copies through one NIC port go one after another, as do the pieces
		// of one hop; a chain holds each of the (N-1)k rail pieces at most
		// once, then one write inside a node.
		k := ChunkCount(g.bytes, g.chunks, g.dtype)
		assert.LessOrEqual(t, rep.CriticalTransfers, max(g.nodes-1, 1)*k+1, "depth")
	})
}
