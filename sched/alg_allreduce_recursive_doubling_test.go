package sched

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// Recursive-doubling allreduce (Thakur, Rabenseifner and Gropp 2005 section
// 4.4): verifies real contents for every rank count of the grid
// (non-powers of two fold pairs first) with log2 P' exchanges on the
// critical path, plus two folding transfers when P is not a power of two.
func TestAllreduceRecursiveDoublingVerifies(t *testing.T) {
	verifyGrid(t, coll.Allreduce, "recursive_doubling", nil,
		func(t *testing.T, g gridCase, plan *Plan, rep *Report) {
			p := g.nodes * g.gpus
			p2 := 1
			for p2*2 <= p {
				p2 *= 2
			}
			want := ceilLog2(p2)
			if p2 != p {
				want += 2
			}
			if g.chunks <= 1 && g.bytes > 0 {
				assert.Equal(t, want, rep.CriticalTransfers)
			}
		})
}

// Every rank of a power-of-two job sends log2 P whole vectors (times the
// pieces), and with 4 ranks no receive waits for anything: both can be
// posted when the call starts.
func TestAllreduceRecursiveDoublingShape(t *testing.T) {
	cases := []struct {
		ranks, chunks int
		sends         int
	}{
		{2, 1, 1}, {4, 1, 2}, {8, 1, 3}, {4, 3, 6},
	}
	for i, c := range cases {
		spec := Spec{Collective: coll.Allreduce, Algorithm: "recursive_doubling", Topo: topo.SweepShape(1, c.ranks), Bytes: 1 << 12, DtypeBytes: 4, Chunks: c.chunks}
		plan, err := Generate(spec)
		require.NoError(t, err, "case %d", i)
		_, err = Verify(plan)
		require.NoError(t, err, "case %d", i)
		for r, prog := range plan.Ranks {
			sends, bytes := 0, int64(0)
			for id, s := range prog.Steps {
				switch s.Op {
				case OpSend:
					sends++
					bytes += s.Len
				case OpRecv:
					if c.ranks == 4 {
						assert.Empty(t, prog.Deps(id), "case %d rank %d: recv %d waits", i, r, id)
					}
				}
			}
			assert.Equal(t, c.sends, sends, "case %d rank %d", i, r)
			assert.Equal(t, int64(ceilLog2(c.ranks))<<12, bytes, "case %d rank %d", i, r)
		}
	}
}
