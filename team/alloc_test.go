package team

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
)

// A progress function tests a call in flight millions of times a second
// while it waits for its peers (UCC's ucc_collective_test, a blocking
// MPI call's loop). Each test must allocate nothing: an allocation per
// poll is a garbage collection every few milliseconds, on every rank, in
// the middle of calls. Rank 0 posts; rank 1 has not yet, so rank 0's call
// waits, as it does behind a late peer. (Package direct tests its own
// engine's polls alike.)
func TestWaitingCallTestsWithoutAllocating(t *testing.T) {
	teams := newTestTeams(t, 2, "")
	const count = 1 << 10
	colls := make([]*Coll, 2)
	for r := range colls {
		src, dst := cbuf(t, 4*count), cbuf(t, 4*count)
		c, err := NewColl(teams[r], Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(dst), Count: count, Dtype: coll.Float32, Op: coll.Sum, Mem: MemHost})
		require.NoError(t, err)
		colls[r] = c
	}
	require.NoError(t, colls[0].Post())
	for i := 0; i < 100; i++ { // the first tests connect and begin
		_, err := colls[0].Test()
		require.NoError(t, err)
	}
	allocs := testing.AllocsPerRun(2000, func() {
		if done, err := colls[0].Test(); done || err != nil {
			t.Fatalf("rank 0's call ended alone: done %v, %v", done, err)
		}
	})
	require.Zero(t, allocs, "allocations per test of a waiting call (%s)", colls[0].Algorithm())
	require.NoError(t, colls[1].Post())
	for left := 2; left > 0; {
		left = 0
		for _, c := range colls {
			done, err := c.Test()
			require.NoError(t, err)
			if !done {
				left++
			}
		}
	}
	for _, c := range colls {
		c.Finalize()
	}
}
