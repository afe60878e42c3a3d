package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/goring-hpc/goring/coll"
)

// Rabenseifner's allreduce (Multi-lane section 2): verifies for every rank
// count (non-powers of two fold pairs first) with 2 log2 P' exchanges, plus
// two folding transfers when P is not a power of two.
func TestAllreduceRabenseifnerVerifies(t *testing.T) {
	verifyGrid(t, coll.Allreduce, "rabenseifner", nil,
		func(t *testing.T, g gridCase, plan *Plan, rep *Report) {
			p := g.nodes * g.gpus
			p2 := 1
			for p2*2 <= p {
				p2 *= 2
			}
			want := 2 * ceilLog2(p2)
			if p2 != p {
				want += 2
			}
			if g.bytes/int64(g.dtype) >= int64(p) {
				assert.Equal(t, want, rep.CriticalTransfers)
			}
		})
}
