package direct

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/fakedev"
	"github.com/goring-hpc/goring/exec/memtransport"
	"github.com/goring-hpc/goring/exec/reduce"
)

// job is P ranks of one call on fake device memory: every rank's buffers
// in one arena (as processes' buffers on one GPU), each rank's own mapper
// (a fakedev engine: the leader sees the others' allocations only under
// aliases, as through CUDA IPC), the in-process network for the messages.
type job struct {
	arena    *fakedev.Arena
	net      *memtransport.Network
	mappers  []Mapper
	locals   []exec.LocalExecutor
	src, dst []exec.Region
}

func newJob(t *testing.T, c coll.Collective, p int, B int64, inPlace bool, seed uint64, inOrder bool) *job {
	t.Helper()
	j := &job{arena: fakedev.New(seed), src: make([]exec.Region, p), dst: make([]exec.Region, p)}
	j.net = memtransport.New(p, memtransport.Options{Seed: seed, Reorder: true, MaxDelay: 20 * time.Microsecond})
	for r := 0; r < p; r++ {
		j.mappers = append(j.mappers, j.arena.Engine(r))
		var l exec.LocalExecutor = j.arena.Local()
		if inOrder {
			l = &inOrderLocal{fake: l.(*fakedev.Local)}
		}
		j.locals = append(j.locals, l)
		switch {
		case c == coll.ReduceScatter:
			j.src[r] = j.arena.Alloc(0, int64(p)*B)
			j.dst[r] = j.arena.Alloc(0, B)
			if inPlace { // UCC's: the result goes to the rank's block of its input
				j.dst[r] = j.src[r].Slice(int64(r)*B, B)
			}
		case c == coll.Bcast: // one buffer
			j.dst[r] = j.arena.Alloc(0, B)
			j.src[r] = j.dst[r]
		case c == coll.Allgather:
			j.dst[r] = j.arena.Alloc(0, int64(p)*B)
			j.src[r] = j.arena.Alloc(0, B)
			if inPlace {
				j.src[r] = j.dst[r].Slice(int64(r)*B, B)
			}
		default:
			j.dst[r] = j.arena.Alloc(0, B)
			j.src[r] = j.arena.Alloc(0, B)
			if inPlace {
				j.src[r] = j.dst[r]
			}
		}
	}
	return j
}

// run calls every rank's Call in its own goroutine, as the processes do.
func (j *job) run(c coll.Collective, dt coll.Dtype, op coll.Op) []error {
	return j.runFused(c, dt, op, 0)
}

func (j *job) runFused(c coll.Collective, dt coll.Dtype, op coll.Op, fuse int) []error {
	return j.runRoot(c, dt, op, fuse, 0)
}

func (j *job) runRoot(c coll.Collective, dt coll.Dtype, op coll.Op, fuse, root int) []error {
	p := len(j.src)
	errs := make([]error, p)
	var wg sync.WaitGroup
	for r := 0; r < p; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			var call Call
			cfg := Config{Collective: c, Rank: r, Size: p, Src: j.src[r], Dst: j.dst[r], Dtype: dt, Op: op,
				Transport: j.net.Endpoint(r), Device: &Device{Mapper: j.mappers[r], Local: j.locals[r], Fuse: fuse}, Deadline: time.Now().Add(10 * time.Second), Root: root}
			if err := call.Begin(cfg); err != nil {
				errs[r] = err
				return
			}
			for {
				done, err := call.Progress(time.Now().Add(time.Millisecond))
				if err != nil || done {
					errs[r] = err
					return
				}
			}
		}(r)
	}
	wg.Wait()
	return errs
}

// inOrderLocal runs each op as it is given (so ops run in the order
// started) and reports it at the next Poll: the executor the leader may
// hand a whole plan at once.
type inOrderLocal struct {
	fake *fakedev.Local
	done []exec.Completion
}

func (l *inOrderLocal) InOrder() bool { return true }

func (l *inOrderLocal) Local(op *exec.LocalOp) (bool, error) {
	if _, err := l.fake.Local(op); err != nil {
		return true, err
	}
	for l.fake.Pending() > 0 {
		l.done = l.fake.Poll(l.done)
	}
	return false, nil
}

func (l *inOrderLocal) Cancel(token uint64) error { return nil }

func (l *inOrderLocal) Pending() int { return len(l.done) }

func (l *inOrderLocal) Poll(dst []exec.Completion) []exec.Completion {
	dst = append(dst, l.done...)
	l.done = l.done[:0]
	return dst
}

// The leader allreduce and allgather (package doc; sched's "leader")
// leave every rank's buffer with the serial result, bit for bit, over
// rank counts, odd sizes, in place or not, dtypes and ops, with the ops
// run in random order (fakedev) and in the order started.
func TestCallMatchesReference(t *testing.T) {
	type kase struct {
		c       coll.Collective
		dt      coll.Dtype
		op      coll.Op
		p       int
		elems   int64
		inPlace bool
		inOrder bool
		fuse    int
	}
	var cases []kase
	i := 0
	for _, p := range []int{1, 2, 3, 4, 8} {
		for _, elems := range []int64{1, 3, 1001} {
			for _, ip := range []bool{false, true} {
				dts := []coll.Dtype{coll.Float32, coll.Int32, coll.Float64, coll.Uint8, coll.Bfloat16}
				ops := []coll.Op{coll.Sum, coll.Max, coll.Prod, coll.Min}
				// Fused ops of up to 8 (every rank in one op), 3 (teams in
				// groups) and 2 operands; the in-order executor runs
				// pairwise ops only.
				fuse := []int{0, 3, 2}[i%3]
				cases = append(cases,
					kase{coll.Allreduce, dts[i%len(dts)], ops[i%len(ops)], p, elems, ip, i%2 == 0, fuse},
					kase{coll.Allgather, coll.Uint8, coll.Sum, p, elems * int64(1+i%4), ip, i%2 == 1, fuse})
				i++
			}
		}
	}
	for k, tc := range cases {
		t.Run(fmt.Sprintf("%d_%s_%s_%s_p%d_%d_inplace%v_inorder%v_fuse%d", k, tc.c, tc.dt, tc.op, tc.p, tc.elems, tc.inPlace, tc.inOrder, tc.fuse), func(t *testing.T) {
			B := tc.elems * int64(tc.dt.Size())
			j := newJob(t, tc.c, tc.p, B, tc.inPlace, uint64(k)+1, tc.inOrder)
			rng := rand.New(rand.NewPCG(uint64(k), 7))
			inputs := make([][]byte, tc.p)
			for r := range inputs {
				inputs[r] = randomElems(rng, tc.dt, tc.elems)
				require.NoError(t, j.arena.Write(j.src[r], inputs[r]))
			}
			for _, err := range j.runFused(tc.c, tc.dt, tc.op, tc.fuse) {
				require.NoError(t, err)
			}
			want := reference(t, tc.c, tc.dt, tc.op, inputs)
			for r := range j.dst {
				got, err := j.arena.Read(j.dst[r])
				require.NoError(t, err)
				require.Equal(t, want, got, "rank %d's result", r)
				if !tc.inPlace {
					in, err := j.arena.Read(j.src[r])
					require.NoError(t, err)
					require.Equal(t, inputs[r], in, "rank %d's input is left as it was", r)
				}
			}
		})
	}
}

// The leader reduce_scatter and bcast on one device: every rank's block
// (the serial reduction's, bit for bit) or the root's buffer, over rank
// counts, odd sizes, in place (reduce_scatter) and roots (bcast).
func TestCallReduceScatterAndBcast(t *testing.T) {
	k := 0
	for _, p := range []int{1, 2, 3, 4, 8} {
		for _, elems := range []int64{1, 3, 1001} {
			for _, ip := range []bool{false, true} {
				k++
				dt, op := []coll.Dtype{coll.Float32, coll.Int32, coll.Bfloat16}[k%3], []coll.Op{coll.Sum, coll.Max, coll.Prod}[k%3]
				t.Run(fmt.Sprintf("reduce_scatter_%s_%s_p%d_%d_inplace%v", dt, op, p, elems, ip), func(t *testing.T) {
					B := elems * int64(dt.Size())
					j := newJob(t, coll.ReduceScatter, p, B, ip, uint64(k), false)
					rng := rand.New(rand.NewPCG(uint64(k), 9))
					inputs := make([][]byte, p)
					for r := range inputs {
						inputs[r] = randomElems(rng, dt, int64(p)*elems)
						require.NoError(t, j.arena.Write(j.src[r], inputs[r]))
					}
					for _, err := range j.run(coll.ReduceScatter, dt, op) {
						require.NoError(t, err)
					}
					whole := reference(t, coll.Allreduce, dt, op, inputs)
					for r := range j.dst {
						got, err := j.arena.Read(j.dst[r])
						require.NoError(t, err)
						require.Equal(t, whole[int64(r)*B:int64(r+1)*B], got, "rank %d's block", r)
					}
				})
				root := (k * 5) % p
				t.Run(fmt.Sprintf("bcast_p%d_%d_root%d_fuse%d", p, elems, root, k%3), func(t *testing.T) {
					j := newJob(t, coll.Bcast, p, elems, false, uint64(k), false)
					rng := rand.New(rand.NewPCG(uint64(k), 11))
					want := randomElems(rng, coll.Uint8, elems)
					for r := range j.src {
						in := want
						if r != root {
							in = make([]byte, elems) // overwritten by the root's
						}
						require.NoError(t, j.arena.Write(j.src[r], in))
					}
					for _, err := range j.runRoot(coll.Bcast, coll.Uint8, coll.Sum, []int{0, 2, 1}[k%3], root) {
						require.NoError(t, err)
					}
					for r := range j.dst {
						got, err := j.arena.Read(j.dst[r])
						require.NoError(t, err)
						require.Equal(t, want, got, "rank %d", r)
					}
				})
			}
		}
	}
}

// A reduce_scatter whose team is larger than one fused step takes is
// refused on every rank with the reason.
func TestCallRefusesReduceScatterBeyondOneStep(t *testing.T) {
	j := newJob(t, coll.ReduceScatter, 4, 16, false, 2, false)
	for r, err := range j.runFused(coll.ReduceScatter, coll.Float32, coll.Sum, 3) {
		require.Error(t, err, "rank %d", r)
		assert.Contains(t, err.Error(), "at most 3 ranks", "rank %d", r)
	}
}

// randomElems is n elements of dt: small integers, so that products and
// sums stay exact and in range for every type.
func randomElems(rng *rand.Rand, dt coll.Dtype, n int64) []byte {
	b := make([]byte, 0, n*int64(dt.Size()))
	for i := int64(0); i < n; i++ {
		v := 1 + rng.IntN(3)
		switch dt {
		case coll.Float32:
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
		case coll.Float64:
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(v)))
		case coll.Bfloat16:
			b = binary.LittleEndian.AppendUint16(b, uint16(math.Float32bits(float32(v))>>16))
		case coll.Int32:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		case coll.Uint8:
			b = append(b, byte(v))
		default:
			panic("randomElems: add " + dt.String())
		}
	}
	return b
}

// reference is the serial result: inputs reduced in rank order, or
// concatenated.
func reference(t *testing.T, c coll.Collective, dt coll.Dtype, op coll.Op, inputs [][]byte) []byte {
	var out []byte
	if c == coll.Allgather {
		for _, in := range inputs {
			out = append(out, in...)
		}
		return out
	}
	f, err := reduce.Kernel(dt, op)
	require.NoError(t, err)
	out = append(out, inputs[0]...)
	for _, in := range inputs[1:] {
		f(out, in)
	}
	return out
}

// failingMapper refuses to export or to map, as a pool allocation or a
// handle that cannot be opened would, or (busy) to map for now, as the
// CUDA engine does while a mapping of memory the peer freed is parked.
type failingMapper struct {
	Mapper
	export, mapping, busy bool
}

func (m failingMapper) Export(r exec.Region) ([]byte, int64, error) {
	if m.export {
		return nil, 0, errors.New("not an exportable allocation")
	}
	return m.Mapper.Export(r)
}

func (m failingMapper) Map(peer int, key []byte, off, n int64, on exec.Mem) (exec.Region, error) {
	switch {
	case m.mapping:
		return exec.Region{}, errors.New("invalid handle")
	case m.busy && peer == 2:
		return exec.Region{}, fmt.Errorf("rank %d's buffer: %w", peer, exec.ErrMappingBusy)
	}
	return m.Mapper.Map(peer, key, off, n, on)
}

// A rank whose buffers cannot be exported, or a leader that cannot map
// them (for good, or only during this call), ends the call on every rank
// with the reason and ErrUnmapped (the team layer then runs the message
// form, whose pushes stage what cannot be mapped); nothing hangs, nothing
// is written.
func TestCallFailsEverywhereWithTheReason(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rank   int
		fm     failingMapper
		reason string
	}{
		{"export", 2, failingMapper{export: true}, "rank 2 cannot export its buffers"},
		{"map", 0, failingMapper{mapping: true}, "invalid handle"},
		{"busy", 0, failingMapper{busy: true}, "cannot be mapped during this call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newJob(t, coll.Allreduce, 4, 64, false, 3, false)
			tc.fm.Mapper = j.mappers[tc.rank]
			j.mappers[tc.rank] = tc.fm
			for r, err := range j.run(coll.Allreduce, coll.Float32, coll.Sum) {
				require.Error(t, err, "rank %d", r)
				assert.Contains(t, err.Error(), tc.reason, "rank %d", r)
				assert.ErrorIs(t, err, ErrUnmapped, "rank %d: the caller may run the call another way", r)
			}
		})
	}
}

// A rank whose buffer of a reduction is not aligned to the element size
// (MPI lets buffers start anywhere; the device's reduction kernels take
// aligned elements) makes every rank end the call alike, with nothing
// written, as ErrUnmapped: the team runs it as messages, where that rank
// reduces in aligned copies of its own.
func TestMisalignedBufferEndsTheCallEverywhere(t *testing.T) {
	for _, peer := range []int{0, 2} { // the leader's own buffer, and a peer's
		j := newJob(t, coll.Allreduce, 4, 64, false, 11, false)
		j.src[peer] = j.arena.Alloc(0, 64+8).Slice(2, 64)
		for r, err := range j.run(coll.Allreduce, coll.Float32, coll.Sum) {
			require.Error(t, err, "rank %d", r)
			assert.Contains(t, err.Error(), fmt.Sprintf("rank %d's buffer", peer), "rank %d", r)
			assert.Contains(t, err.Error(), "not aligned", "rank %d", r)
			assert.ErrorIs(t, err, ErrUnmapped, "rank %d: the caller may run the call another way", r)
		}
	}
}

// Ranks that disagree on the call's size fail it, each with the reason.
func TestCallRefusesMismatchedSizes(t *testing.T) {
	j := newJob(t, coll.Allgather, 3, 64, false, 5, false)
	j.src[1], j.dst[1] = j.src[1].Slice(0, 32), j.dst[1].Slice(0, 96)
	for r, err := range j.run(coll.Allgather, coll.Uint8, coll.Sum) {
		require.Error(t, err, "rank %d", r)
		assert.Contains(t, err.Error(), "disagree", "rank %d", r)
		assert.NotErrorIs(t, err, ErrUnmapped, "rank %d: a real failure", r)
	}
}

// A late rank delays the call; it does not fail it (MPI lets ranks be
// late, docs of exec's timeout policy).
func TestCallWaitsForALateRank(t *testing.T) {
	j := newJob(t, coll.Allreduce, 3, 16, false, 9, true)
	for r := range j.src {
		require.NoError(t, j.arena.Write(j.src[r], make([]byte, 16)))
	}
	lateMapper := j.mappers[2]
	j.mappers[2] = slowMapper{lateMapper, 300 * time.Millisecond}
	start := time.Now()
	for _, err := range j.run(coll.Allreduce, coll.Float32, coll.Sum) {
		require.NoError(t, err)
	}
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
}

type slowMapper struct {
	Mapper
	d time.Duration
}

func (m slowMapper) Export(r exec.Region) ([]byte, int64, error) {
	time.Sleep(m.d / 2) // called twice: the rank enters late
	return m.Mapper.Export(r)
}

// PlanWork counts the plans' bytes: an allreduce of 4 ranks copies its
// vector once in, reduces three inputs, copies the result three times out;
// an allgather copies every block to every rank.
func TestPlanWork(t *testing.T) {
	w, err := PlanWork(coll.Allreduce, 4, 100, 1)
	require.NoError(t, err)
	assert.Equal(t, Work{Read: 100 + 600 + 300, Written: 100 + 300 + 300, Ops: 7}, w, "pairwise")
	w, err = PlanWork(coll.Allreduce, 4, 100, 8)
	require.NoError(t, err)
	assert.Equal(t, Work{Read: 400, Written: 400, Ops: 1}, w, "fused: every input read once, every result written once")
	w, err = PlanWork(coll.Allreduce, 8, 100, 3)
	require.NoError(t, err)
	assert.Equal(t, Work{Read: 300 + 300 + 300 + 200 + 300, Written: 4*100 + 700, Ops: 7}, w, "fused in groups of 3: s0-s2, then d0 with two more inputs at a time, then the results out")
	w, err = PlanWork(coll.Allgather, 4, 100, 1)
	require.NoError(t, err)
	assert.Equal(t, Work{Read: 1600, Written: 1600, Ops: 16}, w)
	w, err = PlanWork(coll.Allgather, 4, 100, 8)
	require.NoError(t, err)
	assert.Equal(t, Work{Read: 400, Written: 1600, Ops: 4}, w, "each block read once")
	w, err = PlanWork(coll.ReduceScatter, 4, 100, 8)
	require.NoError(t, err)
	assert.Equal(t, Work{Read: 1600, Written: 400, Ops: 4}, w, "one kernel per block")
	w, err = PlanWork(coll.Bcast, 4, 100, 8)
	require.NoError(t, err)
	assert.Equal(t, Work{Read: 100, Written: 400, Ops: 1}, w, "the root's buffer read once, written to every rank's (its own too: not in place)")
	_, err = PlanWork(coll.Alltoallv, 4, 100, 8)
	assert.Error(t, err)
}
