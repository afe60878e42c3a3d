package team

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
)

// failEverywhere posts each rank's call (made already) and polls them all
// until every rank has failed: a rank that completes, or one still
// waiting after a few seconds (a peer left it alone), fails the test. It
// returns each rank's error.
func failEverywhere(t *testing.T, colls []*Coll) []error {
	t.Helper()
	for _, c := range colls {
		require.NoError(t, c.Post())
	}
	errs := make([]error, len(colls))
	deadline := time.Now().Add(5 * time.Second)
	for left := len(colls); left > 0; {
		require.True(t, time.Now().Before(deadline), "ranks still waiting: %v", errs)
		left = 0
		for r, c := range colls {
			if errs[r] != nil {
				continue
			}
			done, err := c.Test()
			require.False(t, done, "rank %d completed a call that a rank refused", r)
			if errs[r] = err; err == nil {
				left++
			}
		}
	}
	for _, c := range colls {
		c.Finalize()
	}
	return errs
}

// One rank's receive blocks overlap (its own displacements, which no peer
// sees): with an algorithm that exchanges counts, every rank must fail the
// call, not the one rank after the exchange while its peers go on to send
// it data and wait for its own.
func TestTeamAlltoallvRefusalFailsEverywhere(t *testing.T) {
	const n = 3
	teams := newTestTeams(t, n, "")
	colls := make([]*Coll, n)
	for r := range n {
		v := UniformA2A(2, n)
		v.Uniform = false
		if r == 1 {
			v.RecvDispls = []uint64{0, 1, 4} // blocks 0 and 1 share byte 1
		}
		src, dst := cbuf(t, 16), cbuf(t, 16)
		c, err := NewColl(teams[r], Args{Coll: coll.Alltoallv, Src: ptr(src), Dst: ptr(dst), Dtype: coll.Uint8, Alg: "nimble", A2A: v})
		require.NoError(t, err, "rank %d: a refusal at init leaves its peers waiting in the exchange", r)
		colls[r] = c
	}
	errs := failEverywhere(t, colls)
	for r, err := range errs {
		require.Equal(t, StatusInvalid, StatusOf(err), "rank %d: %v", r, err)
		if r == 1 {
			require.ErrorContains(t, err, "overlaps")
		} else {
			require.ErrorContains(t, err, "rank 1")
		}
	}
	teamCollectivesAfter(t, teams)
}
