package cpumodel

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/devsync"
	"github.com/goring-hpc/goring/exec/reduce"
)

// orderSensitive is float32 data whose sums depend on their order: values
// from 1e-3 to 1e7 of both signs, so adding rank 1's value before rank
// 0's rounds differently.
func orderSensitive(rng *rand.Rand, elems int) []byte {
	b := make([]byte, elems*4)
	for i := range elems {
		v := float32((rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(11)-3)))
		binary.LittleEndian.PutUint32(b[i*4:], math.Float32bits(v))
	}
	return b
}

// inputsFor is calls of fresh inputs (every call's differ, so a stale
// slot shows in the output too).
func inputsFor(s devsync.Shape, calls int, seed uint64) [][][]byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	in := make([][][]byte, calls)
	for c := range in {
		in[c] = make([][]byte, s.Ranks)
		for r := range in[c] {
			in[c][r] = orderSensitive(rng, s.InElems())
		}
	}
	return in
}

func sumFloat32(t *testing.T) func(dst, src []byte) {
	f, err := reduce.Kernel(coll.Float32, coll.Sum)
	require.NoError(t, err)
	return f
}

func config(t *testing.T, s devsync.Shape, calls int, seed uint64) Config {
	return Config{Shape: s, Reduce: sumFloat32(t), Calls: calls, Seed: seed, Dead: -1}
}

// shapes: every algorithm on 2 to 8 ranks, 1 to 3 blocks, counts that do
// and do not divide (an LL algorithm's one more where odd: its lines
// carry whole 8-byte words).
func shapes() []devsync.Shape {
	var r []devsync.Shape
	for _, alg := range devsync.Algorithms {
		for _, c := range []struct{ ranks, blocks, count int }{{2, 1, 1}, {2, 2, 13}, {3, 3, 37}, {4, 2, 64}, {5, 1, 9}, {8, 3, 41}} {
			if alg.LL() {
				c.count += c.count % 2
			}
			r = append(r, devsync.Shape{Alg: alg, Ranks: c.ranks, Blocks: c.blocks, Count: c.count, ElemSize: 4, Root: c.ranks / 2})
		}
	}
	return r
}

// A reduce_scatter on blocks further apart than its count (a piece of a
// larger call: the same range of every block) is right under many
// interleavings, and reads nothing between the pieces it owns.
func TestReduceScatterWithAStride(t *testing.T) {
	for _, c := range []struct{ ranks, blocks, count, stride int }{{2, 1, 5, 9}, {3, 2, 16, 40}, {4, 3, 13, 13}, {8, 2, 7, 100}} {
		s := devsync.Shape{Alg: devsync.ReduceScatter, Ranks: c.ranks, Blocks: c.blocks, Count: c.count, ElemSize: 4, Stride: c.stride}
		in := inputsFor(s, 4, 3)
		for seed := range uint64(6) {
			cfg := config(t, s, 4, seed)
			require.Empty(t, Check(cfg, in), "%+v seed %d", s, seed)
		}
	}
}

// The protocol as designed: every call of every shape gives the
// rank-order reference on every rank, with no stale read, under many
// interleavings; and two interleavings give the same bytes.
func TestProtocolIsCorrect(t *testing.T) {
	for _, s := range shapes() {
		in := inputsFor(s, 5, 1)
		var first *Result
		for seed := range uint64(12) {
			cfg := config(t, s, 5, seed)
			res, err := Run(cfg, in)
			require.NoError(t, err, "%v %+v seed %d", s.Alg, s, seed)
			require.Empty(t, Problems(cfg, in, res), "%v %+v seed %d", s.Alg, s, seed)
			if first == nil {
				first = res
				continue
			}
			for c := range res.Outputs {
				for r := range res.Outputs[c] {
					require.True(t, bytes.Equal(first.Outputs[c][r], res.Outputs[c][r]), "runs differ: %v call %d rank %d", s.Alg, c, r)
				}
			}
		}
		if s.Alg == devsync.OneShotAllreduce || s.Alg == devsync.TwoShotAllreduce {
			for r := 1; r < s.Ranks; r++ {
				require.Equal(t, first.Outputs[0][0], first.Outputs[0][r], "ranks differ")
			}
		}
	}
}

// The test data can tell reduction orders apart: some element's sum in
// rank order differs from the sum starting at another rank.
func TestDataShowsTheOrder(t *testing.T) {
	s := devsync.Shape{Alg: devsync.OneShotAllreduce, Ranks: 4, Blocks: 1, Count: 64, ElemSize: 4}
	in := inputsFor(s, 1, 1)[0]
	add := sumFloat32(t)
	inOrder := Reference(config(t, s, 1, 0), 0, in, 0)
	rotated := append([]byte(nil), in[1]...)
	for _, x := range [][]byte{in[2], in[3], in[0]} {
		add(rotated, x)
	}
	require.NotEqual(t, inOrder, rotated)
}

// Each injected bug is caught: by the stale-read tags, by a wrong output,
// or both, on at least one seed of every algorithm it applies to; and it
// is caught on most (shape, seed) runs overall, so the checker does not
// pass it by luck.
func TestCheckerCatchesEveryMutation(t *testing.T) {
	for _, m := range Mutations {
		runs, caught := 0, 0
		for _, s := range shapes() {
			if m == OwnRankFirst && (!s.Alg.Reduces() || s.Ranks < 3) {
				// Nothing to reorder; and of two operands a+b is b+a
				// exactly (IEEE addition commutes), so only three or
				// more ranks can tell the orders apart.
				continue
			}
			if m == NoFence && s.Alg.LL() {
				continue // no fence to leave out: each line carries its tag
			}
			caughtHere := false
			in := inputsFor(s, 6, 2)
			for seed := range uint64(8) {
				cfg := config(t, s, 6, seed)
				cfg.Mutation = m
				runs++
				if len(Check(cfg, in)) > 0 {
					caught++
					caughtHere = true
				}
			}
			require.True(t, caughtHere, "%v not caught on %v %+v", m, s.Alg, s)
		}
		t.Logf("%v: caught in %d of %d runs", m, caught, runs)
		require.Greater(t, caught*2, runs, "%v caught in only %d of %d runs", m, caught, runs)
	}
}

// A rank dies before its second call: the others' waits end, once the
// host sets the abort word, with an error naming it, instead of hanging.
func TestDeadRankAbortsWaits(t *testing.T) {
	for _, alg := range []devsync.Algorithm{devsync.OneShotAllreduce, devsync.TwoShotAllreduce, devsync.Allgather,
		devsync.LLOneShotAllreduce, devsync.LLReduceScatter, devsync.LLAllgather} {
		s := devsync.Shape{Alg: alg, Ranks: 4, Blocks: 2, Count: 34, ElemSize: 4} // an LL line's whole words
		cfg := config(t, s, 3, 5)
		cfg.Dead, cfg.DeadAtCall = 2, 1
		res, err := Run(cfg, inputsFor(s, 3, 3))
		require.NoError(t, err)
		require.Len(t, res.Errs, 6, "every block of the 3 live ranks ends its wait")
		for _, e := range res.Errs {
			var ae *devsync.AbortError
			require.ErrorAs(t, e, &ae)
			require.Equal(t, 2, ae.Dead)
			require.Equal(t, devsync.Epoch(2), ae.Epoch)
			require.Contains(t, e.Error(), "aborted: rank 2 is dead")
		}
	}
}

// Without a dead rank, a plan that waits for a signal nobody sends is a
// deadlock the model reports, not a hang.
func TestDeadlockIsReported(t *testing.T) {
	s := devsync.Shape{Alg: devsync.OneShotAllreduce, Ranks: 2, Blocks: 1, Count: 4, ElemSize: 4}
	cfg := config(t, s, 2, 1)
	cfg.Dead, cfg.DeadAtCall = -1, 0
	w := &world{cfg: cfg, mem: newMemory(2, s.SlotBytes(), 0), rng: rand.New(rand.NewPCG(1, 1)), res: &Result{Outputs: [][][]byte{{make([]byte, 16), make([]byte, 16)}, {make([]byte, 16), make([]byte, 16)}}},
		inputs: inputsFor(s, 2, 1)}
	w.cfg.DrainChance = 0.1
	wait := devsync.Step{Kind: devsync.Wait, Phase: 1, Peers: []int{1}}
	w.agents = []*agent{{rank: 0, steps: []devsync.Step{wait}}}
	require.ErrorIs(t, w.loop(), ErrDeadlock)
}

// mixedCalls is a team's calls of every algorithm one after another on
// the same slots, as nodeexec makes them: random algorithms, counts (0 to
// a few vectors; fewer elements than ranks too), grids and roots, bytes
// for allgather and bcast, reduce_scatter pieces whose blocks lie a
// stride apart; and their inputs.
func mixedCalls(ranks, calls int, seed uint64) ([]devsync.Shape, [][][]byte) {
	rng := rand.New(rand.NewPCG(seed, 9))
	shapes := make([]devsync.Shape, calls)
	in := make([][][]byte, calls)
	for c := range shapes {
		s := devsync.Shape{Alg: devsync.Algorithms[rng.IntN(len(devsync.Algorithms))], Ranks: ranks,
			Blocks: 1 + rng.IntN(3), Count: rng.IntN(40), ElemSize: 4, Root: rng.IntN(ranks)}
		if !s.Alg.Reduces() {
			s.ElemSize, s.Count = 1, rng.IntN(100)
		}
		if s.Alg.Base() == devsync.ReduceScatter && rng.IntN(2) == 0 {
			s.Stride = s.Count + rng.IntN(9)
		}
		if s.Alg.LL() { // whole 8-byte words, and some data (ll.go)
			w := 8 / s.ElemSize
			s.Count = max(w, s.Count/w*w)
			if s.Stride != 0 {
				s.Stride = max(s.Count, s.Stride/w*w)
			}
		}
		shapes[c] = s
		in[c] = make([][]byte, ranks)
		for r := range in[c] {
			in[c][r] = orderSensitive(rng, s.InElems()*s.ElemSize/4+1)[:s.InElems()*s.ElemSize]
		}
	}
	return shapes, in
}

// Calls of different algorithms, counts and grids back to back on one
// team's slots (nodeexec runs any sequence, and a large call as pieces
// with epochs of their own) are right under many interleavings: each
// algorithm's waits of call e+1 must prove, whatever ran at e and e+2,
// that every rank finished reading the slots of e before a rank writes
// them again at e+2 (a bcast's readers wait for the root only). And the
// checker still catches the injected bugs on such sequences.
func TestMixedCallsShareTheSlots(t *testing.T) {
	for ranks := 2; ranks <= devsync.MaxRanks; ranks++ {
		for seq := range uint64(4) {
			shapes, in := mixedCalls(ranks, 14, seq)
			for seed := range uint64(6) {
				cfg := Config{Shapes: shapes, Reduce: sumFloat32(t), Calls: len(shapes), Seed: seed, Dead: -1}
				require.Empty(t, Check(cfg, in), "%d ranks, sequence %d %+v, seed %d", ranks, seq, shapes, seed)
			}
		}
	}
	for _, m := range []Mutation{NoFence, ReuseEpoch, SkipWait, EarlyDone} {
		caught := 0
		for seed := range uint64(8) {
			shapes, in := mixedCalls(4, 10, seed)
			cfg := Config{Shapes: shapes, Reduce: sumFloat32(t), Calls: len(shapes), Seed: seed, Dead: -1, Mutation: m}
			if len(Check(cfg, in)) > 0 {
				caught++
			}
		}
		require.Positive(t, caught, "%v not caught on mixed sequences", m)
	}
}
