package sched

import (
	"testing"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func laneTopo(t *testing.T) *topo.Topology {
	tp, err := topo.Synthetic("lanes", 1, 4, 1)
	require.NoError(t, err)
	return tp
}

// A ring allgather's steps stay inside one block each: its lane program
// writes the caller's dst in place (no staging, no extra steps); Bruck's
// runs of blocks are staged in scratch and copied out, one copy per block.
func TestLaneProgramMapsOrStages(t *testing.T) {
	tp := laneTopo(t)
	const whole = 1003
	part := coll.LaneSplit(coll.Allgather, whole, 1, 4, 3)[1]
	for _, tc := range []struct {
		alg    string
		staged bool
	}{{"ring", false}, {"bruck", true}} {
		plan, err := GenerateRank(Spec{Collective: coll.Allgather, Algorithm: tc.alg, Topo: tp, Bytes: part.Len, DtypeBytes: 1}, 2)
		require.NoError(t, err)
		in := &plan.Ranks[2]
		out, err := LaneProgram(plan, 2, part, whole)
		require.NoError(t, err)
		assert.Equal(t, int64(whole), out.Sizes.Src, tc.alg)
		assert.Equal(t, int64(4*whole), out.Sizes.Dst, tc.alg)
		if !tc.staged {
			assert.Equal(t, len(in.Steps), len(out.Steps), tc.alg)
			assert.Equal(t, in.Sizes.Scratch, out.Sizes.Scratch, tc.alg)
			continue
		}
		assert.Equal(t, len(in.Steps)+4, len(out.Steps), "%s: one copy-out per block", tc.alg)
		assert.Equal(t, in.Sizes.Scratch+4*part.Len, out.Sizes.Scratch, tc.alg)
		for r := 0; r < 4; r++ {
			s := out.Steps[len(in.Steps)+r]
			assert.Equal(t, OpCopy, s.Op)
			assert.Equal(t, Ref{BufDst, int64(r)*whole + part.Off}, s.Dst(), "block %d lands at its rank's block, lane offset", r)
			assert.NotEmpty(t, out.Deps(len(in.Steps)+r), "block %d waits for its writers", r)
		}
	}
}

func TestLaneProgramRefuses(t *testing.T) {
	tp := laneTopo(t)
	plan, err := GenerateRank(Spec{Collective: coll.Allgather, Algorithm: "ring", Topo: tp, Bytes: 10, DtypeBytes: 1}, 0)
	require.NoError(t, err)
	_, err = LaneProgram(plan, 0, coll.LanePart{Off: 0, Len: 11}, 100)
	assert.ErrorContains(t, err, "lane plan of 10 bytes")
	_, err = LaneProgram(plan, 0, coll.LanePart{Off: 95, Len: 10}, 100)
	assert.ErrorContains(t, err, "outside")
}
