package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec/memtransport"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// The validation pattern of dispatch and combine accepts what the
// collectives produce and catches one wrong byte.
func TestMoEPatternChecksRealRuns(t *testing.T) {
	r, err := moe.Generate(moe.Options{NRanks: 6, TokensPerRank: 7, TokenBytes: 4 * 9, TopK: 3, Experts: 10, Hot: map[int]float64{2: 0.6}, Seed: 3})
	require.NoError(t, err)
	for _, c := range []coll.Collective{coll.Dispatch, coll.Combine} {
		d := coll.Uint8
		if c == coll.Combine {
			d = coll.Bfloat16
		}
		plan, err := sched.Generate(sched.Spec{Collective: c, Algorithm: "multiwrite", Topo: topo.SweepShape(2, 3), DtypeBytes: d.Size(), Routing: r})
		require.NoError(t, err)
		p := &Pattern{Coll: c, Dtype: d, Op: coll.Sum, NRanks: 6, Bytes: r.TokenBytes, Routing: r}
		in := make([][]byte, 6)
		for q := range in {
			require.Equal(t, plan.Ranks[q].Sizes.Src, p.SrcBytes(q))
			require.Equal(t, plan.Ranks[q].Sizes.Dst, p.DstBytes(q))
			in[q] = make([]byte, p.SrcBytes(q))
			p.FillSrc(in[q], q, 4)
		}
		out, err := memtransport.RunPlanWith(plan, d, coll.Sum, in, memtransport.RunOptions{Timeout: 10 * time.Second})
		require.NoError(t, err)
		for q := range out {
			require.NoError(t, p.Check(out[q], q, 4), "%s rank %d", c, q)
			require.Error(t, p.Check(out[q], q, 5), "%s rank %d: another iteration's pattern", c, q)
			if len(out[q]) > 0 {
				out[q][len(out[q])/2] ^= 0x40
				var ve *ValidationError
				require.ErrorAs(t, p.Check(out[q], q, 4), &ve, "%s rank %d", c, q)
			}
		}
	}
}

// combine's check sees where in a token row each element lands: a row
// whose elements are rotated by one (an element offset off by one) fails.
func TestCombinePatternCatchesShiftedElements(t *testing.T) {
	r, err := moe.Generate(moe.Options{NRanks: 4, TokensPerRank: 5, TokenBytes: 2 * 8, TopK: 2, Experts: 8, Seed: 5})
	require.NoError(t, err)
	d := coll.Bfloat16
	plan, err := sched.Generate(sched.Spec{Collective: coll.Combine, Algorithm: "multiwrite", Topo: topo.SweepShape(2, 2), DtypeBytes: d.Size(), Routing: r})
	require.NoError(t, err)
	p := &Pattern{Coll: coll.Combine, Dtype: d, Op: coll.Sum, NRanks: 4, Bytes: r.TokenBytes, Routing: r}
	in := make([][]byte, 4)
	for q := range in {
		in[q] = make([]byte, p.SrcBytes(q))
		p.FillSrc(in[q], q, 2)
	}
	out, err := memtransport.RunPlanWith(plan, d, coll.Sum, in, memtransport.RunOptions{Timeout: 10 * time.Second})
	require.NoError(t, err)
	H, es := int(r.TokenBytes), d.Size()
	for q := range out {
		require.NoError(t, p.Check(out[q], q, 2), "rank %d", q)
		for row := 0; row+H <= len(out[q]); row += H {
			tok := out[q][row : row+H]
			rot := append(append([]byte{}, tok[es:]...), tok[:es]...)
			copy(tok, rot)
		}
		require.Error(t, p.Check(out[q], q, 2), "rank %d: rows rotated by one element accepted", q)
	}
}
