package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
)

// K-nomial bcast (UCC tl/ucp baseline): every dst equals the root's src, the
// root is rank (P-1)/2 (verifyGrid), and the tree is ceil(log4 P) deep.
func TestBcastKnomialVerifies(t *testing.T) {
	verifyGrid(t, coll.Bcast, "knomial", nil,
		func(t *testing.T, g gridCase, plan *Plan, rep *Report) {
			p := g.nodes * g.gpus
			depth := 0
			for x := 1; x < p; x *= bcastRadix {
				depth++
			}
			assert.Equal(t, depth, rep.CriticalTransfers)
			assert.Equal(t, int64(p-1)*g.bytes, rep.BytesMoved)
		})
}
