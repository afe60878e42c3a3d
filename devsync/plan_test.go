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
// peer it waits for.
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
					}
				}
			}
			for _, w := range waits {
				assert.Equal(t, 1, sent[w], "%v block %d: wait (phase %d from %d at %d) has one signal", s.Alg, b, w[0], w[1], w[2])
			}
		}
	}
}

// A reduction's i-th source is rank i's contribution: its own input for
// the reducing rank, else slot (or LL area) elements that rank i stored
// (into its own slot or the reducer's), so every rank folds in rank
// order, rank 0 first.
func TestReductionsFoldInRankOrder(t *testing.T) {
	for _, s := range shapes() {
		if !s.Alg.Reduces() {
			continue
		}
		for b := range s.Blocks {
			plans := make([][]Step, s.Ranks)
			writer := map[[3]int]int{} // (space, owner, element) -> the rank that stores it
			for r := range s.Ranks {
				steps, err := Plan(s, r, b)
				require.NoError(t, err)
				plans[r] = steps
				for _, st := range steps {
					for _, d := range st.Dsts {
						for i := d.Off; (d.Space == Slot || d.Space == LL) && i < d.Off+d.Len; i++ {
							k := [3]int{int(d.Space), d.Rank, i}
							if w, ok := writer[k]; ok && w != r {
								t.Fatalf("%v: element %d of rank %d's slot stored by ranks %d and %d", s.Alg, i, d.Rank, w, r)
							}
							writer[k] = r
						}
					}
				}
			}
			for r, steps := range plans {
				for _, st := range steps {
					if st.Kind != Move || len(st.Srcs) < 2 {
						continue
					}
					require.Len(t, st.Srcs, s.Ranks, "%v: a reduction reads every rank", s.Alg)
					for q, src := range st.Srcs {
						if src.Space == Input {
							assert.Equal(t, r, q, "%v rank %d: its input is source %d", s.Alg, r, q)
							continue
						}
						for i := src.Off; i < src.Off+src.Len; i++ {
							w, ok := writer[[3]int{int(src.Space), src.Rank, i}]
							assert.True(t, ok && w == q, "%v rank %d block %d: source %d reads element %d of rank %d's %v", s.Alg, r, b, q, i, src.Rank, src.Space)
						}
					}
				}
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
		{Alg: LLOneShotAllreduce, Ranks: 2, Blocks: 1, Count: 0, ElemSize: 4},          // no data: ends without its peers
		{Alg: LLOneShotAllreduce, Ranks: 2, Blocks: 1, Count: 3, ElemSize: 4},          // half a word
		{Alg: LLReduceScatter, Ranks: 2, Blocks: 1, Count: 2, ElemSize: 4, Stride: 3},  // blocks off the word
		{Alg: LLAllgather, Ranks: 8, Blocks: 1, Count: LLAreaBytes / 8, ElemSize: 1},   // lines beyond the area
		{Alg: LLAllgather, Ranks: 2, Blocks: 1, Count: LLAreaBytes/4 + 8, ElemSize: 1}, // one word too many
	} {
		assert.Error(t, bad.Validate(), "%+v", bad)
	}
	_, err := Plan(ok, 4, 0)
	assert.Error(t, err)
	assert.NoError(t, Shape{Alg: LLAllgather, Ranks: 2, Blocks: 1, Count: LLAreaBytes / 4, ElemSize: 1}.Validate(), "the area's payload, exactly")
}

func TestLayout(t *testing.T) {
	assert.Equal(t, 16384, FlagBytes)
	assert.Equal(t, FlagBytes/8-1, FlagWord(MaxPhases-1, MaxBlocks-1, MaxRanks-1))
	assert.Equal(t, 32, SlotBytes(17))
	assert.Equal(t, FlagBytes+2*LLAreaBytes+32, SlotOffset(1, 32))
	assert.Equal(t, FlagBytes+2*LLAreaBytes+64, ScratchBytes(32))
	assert.Equal(t, FlagBytes+LLAreaBytes, LLOffset(1))
	assert.Equal(t, LLOffset(1)+LLAreaBytes, ZeroedBytes)
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
			if alg.LL() { // whole 8-byte words, and some data (ll.go)
				w := 8 / c.size
				c.count = max(w, (c.count+w-1)/w*w)
			}
			r = append(r, Shape{Alg: alg, Ranks: c.ranks, Blocks: c.blocks, Count: c.count, ElemSize: c.size, Root: c.ranks - 1})
		}
	}
	return r
}
