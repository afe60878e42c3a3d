package coll

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLaneSplitCoversWholeElements(t *testing.T) {
	for _, c := range []Collective{Allgather, Allreduce, ReduceScatter, Bcast} {
		for _, elem := range []int{1, 2, 4, 8} {
			for _, n := range []int{1, 2, 3, 4, 7} {
				for _, w := range []int{1, 2, 3, 4, 8} {
					for _, units := range []int64{0, 1, 3, 7, 29, 1000, 1001, 4097} {
						bytes := units * int64(elem)
						parts := LaneSplit(c, bytes, elem, n, w)
						require.Len(t, parts, w)
						var off, lo, hi int64 = 0, bytes, 0
						for i, p := range parts {
							assert.Equal(t, off, p.Off, "%s elem %d n %d w %d bytes %d lane %d", c, elem, n, w, bytes, i)
							assert.Zero(t, p.Len%int64(elem), "lane %d holds whole elements", i)
							assert.Zero(t, p.Off%int64(elem), "lane %d starts on an element", i)
							off += p.Len
							lo, hi = min(lo, p.Len), max(hi, p.Len)
						}
						assert.Equal(t, bytes, off, "parts cover the buffer")
						g := LaneGrain(c, bytes, elem, n, w)
						assert.LessOrEqual(t, hi-lo, 2*g, "%s %d bytes on %d lanes: parts within a grain and a tail of each other", c, bytes, w)
					}
				}
			}
		}
	}
}

func TestLaneSplitExamples(t *testing.T) {
	// 10 float32 on 3 lanes: grains of one element, 4+3+3.
	assert.Equal(t, []LanePart{{0, 16}, {16, 12}, {28, 12}}, LaneSplit(Allgather, 40, 4, 2, 3))
	// allreduce of 4 ranks, 4-byte elements: grains of 16 bytes; 100
	// bytes = 6 grains + 4: lanes 0 and 1 take two grains, 2 and 3 one, the
	// last also the 4-byte tail.
	assert.Equal(t, []LanePart{{0, 32}, {32, 32}, {64, 16}, {80, 20}}, LaneSplit(Allreduce, 100, 4, 4, 4))
	// Too short for a rank-aligned grain per lane: element grains.
	assert.Equal(t, []LanePart{{0, 8}, {8, 4}, {12, 4}, {16, 4}}, LaneSplit(Allreduce, 20, 4, 4, 4))
	// Fewer bytes than lanes: empty lanes at the end.
	assert.Equal(t, []LanePart{{0, 1}, {1, 1}, {2, 0}, {2, 0}}, LaneSplit(Allgather, 2, 1, 3, 4))
	// One lane is the whole buffer.
	assert.Equal(t, []LanePart{{0, 12345}}, LaneSplit(Allgather, 12345, 1, 3, 1))
}

func TestCheckLanes(t *testing.T) {
	require.NoError(t, CheckLanes(Allreduce, 1))
	require.NoError(t, CheckLanes(Allgather, 8))
	require.NoError(t, CheckLanes(Alltoallv, 1))
	for _, tc := range []struct {
		c    Collective
		w    int
		want string
	}{{Allreduce, 0, "want 1 to"}, {Allreduce, MaxLanes + 1, "want 1 to"}, {Alltoallv, 2, "alltoallv runs on one lane"}} {
		err := CheckLanes(tc.c, tc.w)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}
