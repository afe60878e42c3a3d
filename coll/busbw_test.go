package coll

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBusBandwidth(t *testing.T) {
	const MB = 1e6
	cases := []struct {
		c      Collective
		n      int
		counts [][]int64
		want   float64
	}{
		{Allgather, 4, nil, 3},     // (n-1)*B / t
		{ReduceScatter, 4, nil, 3}, // (n-1)*B / t
		{Allreduce, 4, nil, 1.5},   // 2(n-1)/n * B / t
		{Bcast, 4, nil, 1},         // B / t
		{Alltoallv, 4, nil, 3},     // uniform: as allgather
		{Alltoallv, 2, [][]int64{{5 * MB, 1 * MB}, {3 * MB, 0}}, 2}, // (1+3)MB off-rank / 2 ranks
	}
	for i, c := range cases {
		got, err := BusBandwidthGBps(c.c, c.n, MB, c.counts, 1000)
		require.NoError(t, err, "case %d", i)
		assert.InDelta(t, c.want, got, 1e-9, "case %d", i)
	}
	got, err := BusBandwidthGBps(Allgather, 4, MB, nil, 0)
	assert.Error(t, err)
	assert.Zero(t, got)
}
