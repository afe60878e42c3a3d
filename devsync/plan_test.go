package devsync

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Parts tile [0, count) in order, vector-aligned but for the end.
func TestPartTiles(t *testing.T) {
	for _, c := range []struct{ count, parts, align int }{{0, 3, 4}, {1, 4, 4}, {1000003, 7, 16}, {17, 17, 1}, {64, 3, 8}, {5, 8, 2}} {
		next := 0
		for i := range c.parts {
			off, n := Part(c.count, c.parts, i, c.align)
			require.Equal(t, next, off, "%+v part %d", c, i)
			if off+n < c.count {
				assert.Zero(t, n%c.align, "%+v part %d length %d", c, i, n)
			}
			next = off + n
		}
		assert.Equal(t, c.count, next, "%+v", c)
	}
}

// Every element of every rank's output is written exactly once per call,
// by exactly one block.
func TestPlansCoverOutputOnce(t *testing.T) {
	for _, s := range shapes() {
		for r := range s.Ranks {
			hits := make([]int, s.OutElems())
			for b := range s.Blocks {
				steps, err := Plan(s, r, b)
				require.NoError(t, err)
				for _, st := range steps {
					for _, d := range st.Dsts {
						if d.Space == Output {
							for i := d.Off; i < d.Off+d.Len; i++ {
								hits[i]++
							}
						}
					}
				}
			}
			for i, h := range hits {
				require.Equal(t, 1, h, "%v ranks=%d blocks=%d count=%d rank %d element %d", s.Alg, s.Ranks, s.Blocks, s.Count, r, i)
			}
		}
	}
}

// Every wait of a block has the matching signal in the same block of each
// peer it waits for, and reductions read ranks 0..n-1 in order.
func TestPlansSignalWhatTheyWaitFor(t *testing.T) {
	for _, s := range shapes() {
		for b := range s.Blocks {
			sent := map[[3]int]int{} // (phase, from, to)
			var waits [][3]int
			for r := range s.Ranks {
				steps, err := Plan(s, r, b)
				require.NoError(t, err)
				for _, st := range steps {
					switch st.Kind {
					case Signal:
						for _, q := range st.Peers {
							sent[[3]int{st.Phase, r, q}]++
						}
					case Wait:
						for _, q := range st.Peers {
							waits = append(waits, [3]int{st.Phase, q, r})
						}
					case Move:
						if len(st.Srcs) > 1 {
							for q, src := range st.Srcs {
								assert.Equal(t, q, src.Rank, "%v: reduction order", s.Alg)
							}
						}
					}
				}
			}
			for _, w := range waits {
				assert.Equal(t, 1, sent[w], "%v block %d: wait (phase %d from %d at %d) has one signal", s.Alg, b, w[0], w[1], w[2])
			}
		}
	}
}

func TestShapeValidate(t *testing.T) {
	ok := Shape{Alg: TwoShotAllreduce, Ranks: 4, Blocks: 2, Count: 10, ElemSize: 4}
	require.NoError(t, ok.Validate())
	for _, bad := range []Shape{
		{Alg: TwoShotAllreduce, Ranks: 9, Blocks: 1, ElemSize: 4},
		{Alg: TwoShotAllreduce, Ranks: 2, Blocks: 0, ElemSize: 4},
		{Alg: TwoShotAllreduce, Ranks: 2, Blocks: MaxBlocks + 1, ElemSize: 4},
		{Alg: TwoShotAllreduce, Ranks: 2, Blocks: 1, ElemSize: 3},
		{Alg: Bcast, Ranks: 2, Blocks: 1, ElemSize: 4, Root: 2},
		{Alg: Algorithm(42), Ranks: 2, Blocks: 1, ElemSize: 4},
	} {
		assert.Error(t, bad.Validate(), "%+v", bad)
	}
	_, err := Plan(ok, 4, 0)
	assert.Error(t, err)
}

func TestLayout(t *testing.T) {
	assert.Equal(t, 16384, FlagBytes)
	assert.Equal(t, FlagBytes/8-1, FlagWord(MaxPhases-1, MaxBlocks-1, MaxRanks-1))
	assert.Equal(t, 32, SlotBytes(17))
	assert.Equal(t, FlagBytes+32, SlotOffset(1, 32))
	assert.Equal(t, FlagBytes+64, ScratchBytes(32))
	s := Shape{Alg: Allgather, Ranks: 3, Count: 5, ElemSize: 2}
	assert.Equal(t, 15, s.OutElems())
	assert.Equal(t, 32, s.SlotBytes())
}

func TestEpoch(t *testing.T) {
	e := FirstEpoch
	assert.Equal(t, 1, e.Parity())
	assert.Equal(t, 0, e.Next().Parity())
	assert.False(t, Satisfied(0, e), "a fresh flag word releases no call")
	assert.False(t, Satisfied(uint64(e), e.Next()), "the previous call's flag does not release this one")
	assert.True(t, Satisfied(uint64(e.Next().Next()), e.Next()), "a fast peer's next signal does")
}

func shapes() []Shape {
	var r []Shape
	for _, alg := range Algorithms {
		for _, c := range []struct{ ranks, blocks, count, size int }{{2, 1, 1, 4}, {3, 2, 7, 2}, {4, 3, 1001, 4}, {8, 5, 64, 8}, {5, 4, 0, 1}} {
			r = append(r, Shape{Alg: alg, Ranks: c.ranks, Blocks: c.blocks, Count: c.count, ElemSize: c.size, Root: c.ranks - 1})
		}
	}
	return r
}
