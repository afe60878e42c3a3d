package exec_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/fakedev"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/sched"
	"github.com/stretchr/testify/require"
)

// batchLocal records what a Machine hands a BatchLocal and completes
// nothing by itself: the test says when a step or batch has finished.
type batchLocal struct {
	asyncLocal
	batches [][]exec.LocalOp
	tokens  []uint64
}

func (b *batchLocal) LocalBatch(bt *exec.Batch) (bool, error) {
	ops := make([]exec.LocalOp, len(bt.Steps))
	for i := range ops {
		ops[i] = bt.LocalOp(i)
	}
	b.batches = append(b.batches, ops)
	b.tokens = append(b.tokens, bt.Token)
	return false, nil
}

// twoLevels is a program of n independent copies src -> scratch, a
// reduction of its own, n copies scratch -> dst each after its copy into
// scratch, and a send of dst after all of those: the second level must
// not start before the first level's batch has completed.
func twoLevels(n int) (p *sched.RankProgram, first, second []int, red, send int) {
	p = &sched.RankProgram{Rank: 0, Sizes: sched.Sizes{Src: int64(8 * n), Dst: int64(8*n + 8), Scratch: int64(8 * n)}}
	for i := range n {
		// Scattered: every other row first, so a batch is not one run.
		j := (2*i)%n + (2*i)/n
		first = append(first, p.Copy(src(int64(8*j)), scratch(int64(8*i)), 8))
	}
	red = p.Reduce(src(0), dst(int64(8*n)), 8)
	var all []int
	for i := range n {
		second = append(second, p.Copy(scratch(int64(8*i)), dst(int64(8*(n-1-i))), 8, first[i]))
		all = append(all, second[i])
	}
	send = p.Send(1, 0, dst(0), int64(8*n), sched.Path{}, all...)
	return p, first, second, red, send
}

func stepsOf(ops []exec.LocalOp) []int {
	var ids []int
	for _, op := range ops {
		ids = append(ids, op.Step)
	}
	return ids
}

// A Machine hands the copies that are ready together to a BatchLocal as
// one batch named by its first step's token, the reduction on its own,
// and starts nothing that depends on a batch before the batch's one
// completion; then the whole batch completes at once.
func TestMachineBatchesReadyCopies(t *testing.T) {
	n := 2 * exec.BatchMin
	p, first, second, red, send := twoLevels(n)
	a := &batchLocal{}
	m, err := exec.New(p, bufs(8*n, 8*n+8, 8*n), exec.Config{Collective: coll.Allreduce, NRanks: 2, Dtype: coll.Int32, Op: coll.Sum, Local: a})
	require.NoError(t, err)
	for call := range 2 { // the second call reuses the Machine's storage
		a.batches, a.tokens, a.started = nil, nil, nil
		require.NoError(t, m.Start(), "call %d", call)
		require.True(t, m.Ready().Empty())
		require.Len(t, a.batches, 1, "the first level is one batch")
		require.ElementsMatch(t, first, stepsOf(a.batches[0]))
		require.Equal(t, a.batches[0][0].Token, a.tokens[0])
		for _, op := range a.batches[0] {
			require.Equal(t, sched.OpCopy, op.Kind)
			require.Equal(t, m.Token(op.Step), op.Token)
			require.Equal(t, int64(8), op.Dst.Len())
		}
		require.Len(t, a.started, 1, "the reduction goes through Local")
		require.Equal(t, red, a.started[0].Step)
		require.Equal(t, 2, m.InFlight(), "a batch is one operation in flight")

		// The reduction's completion releases nothing of the second level.
		require.NoError(t, m.Step(exec.Completion{Token: a.started[0].Token}))
		require.Len(t, a.batches, 1)
		require.Len(t, a.started, 1)
		// Listing what is waiting names the batch by its first step.
		w, _ := m.Waiting(10)
		require.Len(t, w, 1)
		require.Equal(t, int(uint32(a.tokens[0])), w[0].ID)

		// The batch's one completion completes all of its steps.
		require.NoError(t, m.Step(exec.Completion{Token: a.tokens[0]}))
		require.Len(t, a.batches, 2, "the second level is one batch, started only now")
		require.ElementsMatch(t, second, stepsOf(a.batches[1]))
		require.True(t, m.Ready().Empty(), "the send waits for the second batch")
		require.NoError(t, m.Step(exec.Completion{Token: a.tokens[1]}))
		r := m.Ready()
		require.Len(t, r.Sends, 1)
		require.Equal(t, send, r.Sends[0].Step)
		require.NoError(t, m.Step(exec.Completion{Token: r.Sends[0].Token}))
		require.True(t, m.Done())
	}
}

// Fewer than BatchMin ready copies go one at a time through Local, and a
// completion naming a batch's step other than its first is refused.
func TestMachineBatchThreshold(t *testing.T) {
	p, first, _, _, _ := twoLevels(exec.BatchMin - 1)
	a := &batchLocal{}
	m, err := exec.New(p, bufs(8*len(first), 8*len(first)+8, 8*len(first)), exec.Config{Collective: coll.Allreduce, NRanks: 2, Dtype: coll.Int32, Op: coll.Sum, Local: a})
	require.NoError(t, err)
	require.NoError(t, m.Start())
	require.Empty(t, a.batches)
	require.Len(t, a.started, len(first)+1)

	p, first, _, _, _ = twoLevels(exec.BatchMin)
	a = &batchLocal{}
	m, err = exec.New(p, bufs(8*len(first), 8*len(first)+8, 8*len(first)), exec.Config{Collective: coll.Allreduce, NRanks: 2, Dtype: coll.Int32, Op: coll.Sum, Local: a})
	require.NoError(t, err)
	require.NoError(t, m.Start())
	require.Len(t, a.batches, 1)
	other := a.batches[0][1].Token
	require.ErrorContains(t, m.Step(exec.Completion{Token: other}), "names no operation in flight")
}

// runOnFakeDevice runs one call of m, whose executor is loc (of arena),
// to its end (loc's completions fed to m as Poll reports them) and
// returns the contents of m's Dst.
func runOnFakeDevice(t *testing.T, arena *fakedev.Arena, m *exec.Machine, loc *fakedev.Local, call int) []byte {
	t.Helper()
	require.NoError(t, m.Start())
	for !m.Done() {
		comps := loc.Poll(nil)
		require.NotEmpty(t, comps, "call %d: the device has nothing to do and the call is not done", call)
		for _, c := range comps {
			require.NoError(t, m.Step(c))
		}
	}
	out, err := arena.Read(m.Buffers().Dst)
	require.NoError(t, err)
	return out
}

// On the fake device, whose work finishes out of order (a batch as one
// unit, its copies in a random order), the two levels' contents come out
// right: a batch's steps completed before its copies ran, or a dependent
// copy started early, would read scratch before it was written.
func TestFakeDeviceBatchContents(t *testing.T) {
	for _, n := range []int{exec.BatchMin - 1, exec.BatchMin, 37, 500} {
		for seed := range uint64(8) {
			t.Run(fmt.Sprintf("n%d/seed%d", n, seed), func(t *testing.T) {
				p := &sched.RankProgram{Rank: 0, Sizes: sched.Sizes{Src: int64(8 * n), Dst: int64(8 * n), Scratch: int64(8 * n)}}
				var firsts []int
				for i := range n {
					firsts = append(firsts, p.Copy(src(int64(8*((7*i)%n))), scratch(int64(8*i)), 8))
				}
				for i := range n {
					p.Copy(scratch(int64(8*i)), dst(int64(8*(n-1-i))), 8, firsts[i])
				}
				arena := fakedev.New(seed)
				b := exec.Buffers{Src: arena.Alloc(0, int64(8*n)), Dst: arena.Alloc(0, int64(8*n)), Scratch: arena.Alloc(0, int64(8*n))}
				in := make([]byte, 8*n)
				for i := range in {
					in[i] = byte(i*31 + int(seed))
				}
				require.NoError(t, arena.Write(b.Src, in))
				loc := arena.Local()
				m, err := exec.New(p, b, exec.Config{Collective: coll.Allgather, NRanks: 1, Local: loc})
				require.NoError(t, err)
				for call := range 2 {
					out := runOnFakeDevice(t, arena, m, loc, call)
					for i := range n {
						j := (7 * i) % n
						require.Equal(t, in[8*j:8*j+8], out[8*(n-1-i):8*(n-i)], "call %d: row %d", call, i)
					}
				}
				if n >= exec.BatchMin {
					require.Positive(t, loc.Batches)
				} else {
					require.Zero(t, loc.Batches)
				}
			})
		}
	}
}

// reduceBatchLocal is a batchLocal that says whether it takes batches of
// reductions (exec.BatchReduce).
type reduceBatchLocal struct {
	batchLocal
	reduce bool
}

func (b *reduceBatchLocal) BatchesReduce() bool { return b.reduce }

// rowSums is a program of n rows, each a copy src -> scratch row, then k
// reductions of src values into the row, each after the one before (the
// order of a row's sum is fixed), then a copy of the row to dst: the
// rows' j-th reductions are ready together. Element size 8.
func rowSums(n, k int) (p *sched.RankProgram, levels [][]int) {
	p = &sched.RankProgram{Rank: 0, Sizes: sched.Sizes{Src: int64(8 * n * (k + 1)), Dst: int64(8 * n), Scratch: int64(8 * n)}}
	levels = make([][]int, k+2)
	last := make([]int, n)
	for i := range n {
		last[i] = p.Copy(src(int64(8*i*(k+1))), scratch(int64(8*i)), 8)
		levels[0] = append(levels[0], last[i])
	}
	for j := 1; j <= k; j++ {
		for i := range n {
			last[i] = p.Reduce(src(int64(8*(i*(k+1)+j))), scratch(int64(8*i)), 8, last[i])
			levels[j] = append(levels[j], last[i])
		}
	}
	for i := range n {
		levels[k+1] = append(levels[k+1], p.Copy(scratch(int64(8*i)), dst(int64(8*(n-1-i))), 8, last[i]))
	}
	return p, levels
}

// A BatchReduce that says so is handed the reductions that are ready
// together as one batch (of the call's dtype and op), each row's next
// reduction only after the batch of its last; one that says no, or a
// BatchLocal that is not a BatchReduce, gets them one at a time.
func TestMachineBatchesReadyReductions(t *testing.T) {
	n, k := exec.BatchMin+1, 3
	p, levels := rowSums(n, k)
	cfg := exec.Config{Collective: coll.Allreduce, NRanks: 1, Dtype: coll.Float64, Op: coll.Sum}
	a := &reduceBatchLocal{reduce: true}
	cfg.Local = a
	m, err := exec.New(p, bufs(8*n*(k+1), 8*n, 8*n), cfg)
	require.NoError(t, err)
	for call := range 2 {
		a.batches, a.tokens, a.started = nil, nil, nil
		require.NoError(t, m.Start(), "call %d", call)
		for l, want := range levels {
			require.Len(t, a.batches, l+1, "call %d: level %d is one batch, started only now", call, l)
			b := a.batches[l]
			require.ElementsMatch(t, want, stepsOf(b))
			kind := sched.OpCopy
			if l > 0 && l <= k {
				kind = sched.OpReduce
			}
			for _, op := range b {
				require.Equal(t, kind, op.Kind)
				if kind == sched.OpReduce {
					require.Equal(t, coll.Float64, op.Dtype)
					require.Equal(t, coll.Sum, op.Op)
				}
			}
			require.Equal(t, 1, m.InFlight())
			require.NoError(t, m.Step(exec.Completion{Token: a.tokens[l]}))
		}
		require.True(t, m.Done())
		require.Empty(t, a.started)
	}

	for _, le := range []exec.LocalExecutor{&reduceBatchLocal{reduce: false}, &batchLocal{}} {
		cfg.Local = le
		m, err := exec.New(p, bufs(8*n*(k+1), 8*n, 8*n), cfg)
		require.NoError(t, err)
		require.NoError(t, m.Start())
		var batches [][]exec.LocalOp
		var started []exec.LocalOp
		step := func() {
			switch l := le.(type) {
			case *reduceBatchLocal:
				batches, started = l.batches, l.started
			case *batchLocal:
				batches, started = l.batches, l.started
			}
		}
		step()
		require.Len(t, batches, 1, "the copies are a batch")
		require.NoError(t, m.Step(exec.Completion{Token: batches[0][0].Token}))
		step()
		require.Len(t, batches, 1, "%T: no batch of reductions", le)
		require.Len(t, started, n, "%T: the reductions go through Local", le)
		for _, op := range started {
			require.Equal(t, sched.OpReduce, op.Kind)
		}
	}
}

// On the fake device, which runs a batch's steps in a random order and
// its queued work out of order, rows of float64 sums whose bits depend on
// the order of their terms (1e20 + 1 - 1e20 is 0, 1e20 - 1e20 + 1 is 1)
// come out as the host's serial sums: a reduction batch that completed
// before its reductions ran, or two reductions of one row run out of
// order (in one batch, or a later one started early), changes them.
func TestFakeDeviceReduceBatchContents(t *testing.T) {
	const k = 4
	for _, n := range []int{exec.BatchMin - 1, exec.BatchMin, 37, 300} {
		for seed := range uint64(8) {
			t.Run(fmt.Sprintf("n%d/seed%d", n, seed), func(t *testing.T) {
				p, _ := rowSums(n, k)
				terms := make([]float64, n*(k+1))
				want := make([]float64, n)
				for i := range n {
					row := terms[i*(k+1) : (i+1)*(k+1)]
					row[0] = float64(i%5) * 0.25
					big := 1e20 * float64(1+i%3)
					// A rotation of (big, 1+i, -big, 0.5), differing by row.
					vals := []float64{big, float64(1 + i), -big, 0.5}
					for j := range k {
						row[1+j] = vals[(j+i+int(seed))%k]
					}
					acc := row[0]
					for _, v := range row[1:] {
						acc += v
					}
					want[n-1-i] = acc
				}
				arena := fakedev.New(seed)
				b := exec.Buffers{Src: arena.Alloc(0, int64(8*len(terms))), Dst: arena.Alloc(0, int64(8*n)), Scratch: arena.Alloc(0, int64(8*n))}
				in := make([]uint64, len(terms))
				for i, v := range terms {
					in[i] = math.Float64bits(v)
				}
				require.NoError(t, arena.Write(b.Src, unsafeBytes(in)))
				loc := arena.Local()
				m, err := exec.New(p, b, exec.Config{Collective: coll.Allreduce, NRanks: 1, Dtype: coll.Float64, Op: coll.Sum, Local: loc})
				require.NoError(t, err)
				for call := range 2 {
					out := runOnFakeDevice(t, arena, m, loc, call)
					for r := range n {
						got := binary.LittleEndian.Uint64(out[8*r:])
						require.Equal(t, math.Float64bits(want[r]), got, "call %d: row %d: %v, want %v", call, r, math.Float64frombits(got), want[r])
					}
				}
				if n >= exec.BatchMin {
					require.Equal(t, 2*k, loc.ReduceBatches, "every level of reductions is a batch, in both calls")
				} else {
					require.Zero(t, loc.Batches)
				}
			})
		}
	}
}

// batchRecorder checks every Batch a Machine hands over against the
// LocalOps of its steps built here from the program and the Machine's
// buffers (what the Machine handed over step by step before Batch), and
// the descriptors benchLocal builds from it as cudaexec does against
// those LocalOps' addresses.
type batchRecorder struct {
	benchLocal
	t    *testing.T
	m    *exec.Machine
	seen map[int32]bool // steps batched in this call
	prog *sched.RankProgram
}

func (r *batchRecorder) LocalBatch(b *exec.Batch) (bool, error) {
	t, m := r.t, r.m
	require.GreaterOrEqual(t, len(b.Steps), exec.BatchMin)
	require.Equal(t, m.Token(int(b.Steps[0])), b.Token, "a batch is named by its first step's token")
	done, err := r.benchLocal.LocalBatch(b)
	require.Len(t, r.descs, len(b.Steps))
	bufs, cfg := m.Buffers(), m.Config()
	for i, id := range b.Steps {
		require.False(t, r.seen[id], "step %d batched twice", id)
		r.seen[id] = true
		s := &b.Prog.Steps[id]
		require.Equal(t, b.Kind, s.Op)
		want := exec.LocalOp{Step: int(id), Token: m.Token(int(id)), Kind: s.Op,
			Dst: bufs.Of(s.DstBuf).Slice(s.DstOff, s.Len), Src: bufs.Of(s.SrcBuf).Slice(s.SrcOff, s.Len), Dtype: cfg.Dtype, Op: cfg.Op}
		require.Equal(t, want, b.LocalOp(i), "step %d", id)
		require.Equal(t, benchDesc{want.Dst.Addr(), want.Src.Addr(), int(want.Dst.Len())}, r.descs[i], "step %d", id)
	}
	r.prog = b.Prog
	return done, err
}

// Every batch of MoE dispatch and combine programs (every algorithm,
// a hot expert, rows of 37 floats) names, through Batch, exactly the
// bytes the LocalOps of its steps name, with their tokens, dtype and op;
// every local step runs once a call, over two calls of one Machine.
func TestBatchMatchesLocalOps(t *testing.T) {
	for _, c := range []coll.Collective{coll.Dispatch, coll.Combine} {
		for _, alg := range sched.Algorithms(c) {
			for seed := range uint64(3) {
				rec := &batchRecorder{t: t}
				o := moe.Options{NRanks: 2 + int(seed), TokensPerRank: 300, TokenBytes: 4 * 37, TopK: 2, Experts: 6, Hot: map[int]float64{1: 0.5}, Seed: seed}
				rec.m = moeMachine(t, c, alg.Name, o, rec)
				for range 2 {
					rec.seen, rec.steps = map[int32]bool{}, 0
					benchCall(t, rec.m, &rec.benchLocal, nil)
					require.NotNil(t, rec.prog, "%s/%s seed %d: no batch", c, alg.Name, seed)
					local := 0
					for i := range rec.prog.Steps {
						if op := rec.prog.Steps[i].Op; op == sched.OpCopy || op == sched.OpReduce {
							local++
						}
					}
					require.Equal(t, local, rec.steps, "%s/%s: every local step once a call", c, alg.Name)
				}
			}
		}
	}
}
