package exec_test

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/memtransport"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
	"github.com/stretchr/testify/require"
)

// ringAllgather builds a ring allgather by hand (the textbook ring of
// the Parallel Rings paper's baseline): rank r forwards, at round k, the block it received
// at round k-1. Every message uses tag 0, so matching relies on the
// same-(peer, tag) order rule.
func ringAllgather(n int, block int64) *sched.Plan {
	plan := &sched.Plan{Collective: coll.Allgather, Algorithm: "hand_ring", NRanks: n, Bytes: block, DtypeBytes: 1}
	for r := 0; r < n; r++ {
		p := sched.RankProgram{Rank: r, Sizes: sched.Sizes{Src: block, Dst: int64(n) * block}}
		prev := p.Copy(src(0), dst(int64(r)*block), block)
		right, left := (r+1)%n, (r+n-1)%n
		for k := 0; k < n-1; k++ {
			sendBlock := int64((r-k+n)%n) * block
			recvBlock := int64((r-k-1+2*n)%n) * block
			p.Send(right, 0, dst(sendBlock), block, sched.Path{}, prev)
			prev = p.Recv(left, 0, dst(recvBlock), block)
		}
		plan.Ranks = append(plan.Ranks, p)
	}
	return plan
}

// directAllreduce builds an allreduce where every rank sends its whole
// vector to every peer and reduces what it receives, one block after the
// other (the chain keeps the reductions from racing on dst).
func directAllreduce(n int, bytes int64) *sched.Plan {
	plan := &sched.Plan{Collective: coll.Allreduce, Algorithm: "hand_direct", NRanks: n, Bytes: bytes, DtypeBytes: 4}
	for r := 0; r < n; r++ {
		p := sched.RankProgram{Rank: r, Sizes: sched.Sizes{Src: bytes, Dst: bytes, Scratch: int64(n) * bytes}}
		prev := p.Copy(src(0), dst(0), bytes)
		for q := 0; q < n; q++ {
			if q != r {
				p.Send(q, 1, src(0), bytes, sched.Path{})
			}
		}
		for q := 0; q < n; q++ {
			if q != r {
				rv := p.Recv(q, 1, scratch(int64(q)*bytes), bytes)
				prev = p.Reduce(scratch(int64(q)*bytes), dst(0), bytes, prev, rv)
			}
		}
		plan.Ranks = append(plan.Ranks, p)
	}
	return plan
}

var transportModes = []memtransport.Options{
	{},
	{Eager: true},
	{Seed: 1, Reorder: true, MaxDelay: 200 * time.Microsecond},
	{Seed: 2, Reorder: true, Eager: true, MaxDelay: 200 * time.Microsecond},
	{Seed: 3, Reorder: true},
}

func TestRunHandBuiltAllgather(t *testing.T) {
	for i, c := range []struct {
		n     int
		block int64
	}{{2, 1}, {3, 5}, {4, 0}, {5, 1000}, {8, 37}} {
		plan := ringAllgather(c.n, c.block)
		inputs := make([][]byte, c.n)
		want := []byte{}
		for r := range inputs {
			inputs[r] = make([]byte, c.block)
			for k := range inputs[r] {
				inputs[r][k] = byte(r*31 + k)
			}
			want = append(want, inputs[r]...)
		}
		for mi, mode := range transportModes {
			out, err := memtransport.RunPlanWith(plan, 0, 0, inputs, memtransport.RunOptions{Options: mode})
			require.NoError(t, err, "case %d mode %d", i, mi)
			for r := range out {
				require.Equal(t, want, out[r], "case %d mode %d rank %d", i, mi, r)
			}
		}
	}
}

func TestRunHandBuiltAllreduce(t *testing.T) {
	for i, c := range []struct {
		n     int
		elems int
		dtype coll.Dtype
		op    coll.Op
	}{{2, 1, coll.Int32, coll.Sum}, {3, 17, coll.Int32, coll.Max}, {4, 100, coll.Float32, coll.Sum}, {5, 3, coll.Uint32, coll.Bxor}} {
		plan := directAllreduce(c.n, int64(4*c.elems))
		inputs := make([][]byte, c.n)
		want := make([]uint32, c.elems)
		for r := range inputs {
			inputs[r] = make([]byte, 4*c.elems)
			for k := 0; k < c.elems; k++ {
				v := int32(r*7 - k)
				var bits uint32
				switch c.dtype {
				case coll.Float32:
					bits = mathFloat32bits(float32(v))
				default:
					bits = uint32(v)
				}
				binary.LittleEndian.PutUint32(inputs[r][4*k:], bits)
				switch {
				case r == 0:
					want[k] = bits
				case c.op == coll.Sum && c.dtype == coll.Float32:
					want[k] = mathFloat32bits(mathFloat32frombits(want[k]) + float32(v))
				case c.op == coll.Sum:
					want[k] += bits
				case c.op == coll.Max:
					want[k] = uint32(max(int32(want[k]), v))
				case c.op == coll.Bxor:
					want[k] ^= bits
				}
			}
		}
		for mi, mode := range transportModes {
			out, err := memtransport.RunPlanWith(plan, c.dtype, c.op, inputs, memtransport.RunOptions{Options: mode})
			require.NoError(t, err, "case %d mode %d", i, mi)
			for r := range out {
				for k := 0; k < c.elems; k++ {
					require.Equal(t, want[k], binary.LittleEndian.Uint32(out[r][4*k:]), "case %d mode %d rank %d elem %d", i, mi, r, k)
				}
			}
		}
	}
}

// A peer that never sends: Run gives up at the deadline and says who it
// was waiting for (the rule that nothing hangs, exec/deadline.go).
func TestRunDeadlineNamesStep(t *testing.T) {
	p := &sched.RankProgram{Rank: 0, Sizes: sched.Sizes{Src: 4, Dst: 8}}
	p.Copy(src(0), dst(0), 4)
	p.Recv(1, 7, dst(4), 4)
	m, err := exec.New(p, bufs(4, 8, 0), exec.Config{Collective: coll.Allgather, Algorithm: "ring", NRanks: 2})
	require.NoError(t, err)
	net := memtransport.New(2, memtransport.Options{})
	start := time.Now()
	err = exec.Run(context.Background(), m, net.Endpoint(0), start.Add(150*time.Millisecond))
	took := time.Since(start)
	require.ErrorIs(t, err, exec.ErrDeadline)
	require.Contains(t, err.Error(), "rank 0 allgather/ring")
	require.Contains(t, err.Error(), "waiting on step 1 (recv from peer 1, tag 7, 4 bytes)")
	require.GreaterOrEqual(t, took, 150*time.Millisecond)
	require.Less(t, took, 2*time.Second)
	var se *exec.StepError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 0, se.Rank)
	require.Equal(t, []exec.StepInfo{{ID: 1, Op: sched.OpRecv, Peer: 1, Tag: 7, Len: 4}}, se.Steps)
	// The receive was cancelled: nothing is left queued in the network.
	require.Zero(t, net.Pending())

	// A cancelled context stops the call too, within the poll slice.
	m, err = exec.New(p, bufs(4, 8, 0), exec.Config{Collective: coll.Allgather, Algorithm: "ring", NRanks: 2})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Millisecond)
	defer cancel()
	err = exec.Run(ctx, m, net.Endpoint(0), time.Now().Add(time.Minute))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "step 1 (recv from peer 1")
}

// A stalled rank in a whole job: every other rank fails within the
// deadline, and the error names the stalled peer's steps.
func TestRunPlanStalledRank(t *testing.T) {
	plan := ringAllgather(4, 16)
	inputs := make([][]byte, 4)
	for r := range inputs {
		inputs[r] = make([]byte, 16)
	}
	start := time.Now()
	_, err := memtransport.RunPlanWith(plan, 0, 0, inputs, memtransport.RunOptions{Timeout: 200 * time.Millisecond, Stall: []int{2}})
	require.Less(t, time.Since(start), 3*time.Second)
	require.ErrorIs(t, err, exec.ErrDeadline)
	require.Contains(t, err.Error(), "rank 3 allgather/hand_ring")
	require.Contains(t, err.Error(), "recv from peer 2, tag 0")
}

// A message longer than the posted receive is an error, never an overrun.
func TestRunTruncation(t *testing.T) {
	plan := &sched.Plan{Collective: coll.Bcast, Algorithm: "bad", NRanks: 2, Bytes: 8}
	p0 := sched.RankProgram{Rank: 0, Sizes: sched.Sizes{Src: 8, Dst: 8}}
	p0.Copy(src(0), dst(0), 8)
	p0.Send(1, 3, src(0), 8, sched.Path{})
	p1 := sched.RankProgram{Rank: 1, Sizes: sched.Sizes{Src: 8, Dst: 8}}
	p1.Recv(0, 3, dst(2), 4)
	plan.Ranks = []sched.RankProgram{p0, p1}
	for mi, mode := range transportModes {
		_, err := memtransport.RunPlanWith(plan, 0, 0, [][]byte{make([]byte, 8), make([]byte, 8)}, memtransport.RunOptions{Options: mode, Timeout: time.Second})
		require.ErrorIs(t, err, memtransport.ErrTruncated, "mode %d", mi)
		require.Contains(t, err.Error(), "rank 1 bcast/bad: step 0 (recv from peer 0, tag 3, 4 bytes)", "mode %d", mi)
	}
}

// The executor's steady state allocates nothing: a warmed-up job's calls,
// every rank's Run included, make no heap allocation.
func TestSteadyStateAllocatesNothing(t *testing.T) {
	plans := []*sched.Plan{ringAllgather(4, 256), directAllreduce(3, 64)}
	for _, c := range []struct {
		coll coll.Collective
		alg  string
	}{{coll.Allgather, "ring"}, {coll.Allgather, "parallel_rings"}, {coll.Allreduce, "ring"}, {coll.Allreduce, "parallel_rings"}} {
		plan, err := sched.Generate(sched.Spec{Collective: c.coll, Algorithm: c.alg, Topo: topo.SweepShape(2, 2), Bytes: 4096, DtypeBytes: 4})
		require.NoError(t, err)
		plans = append(plans, plan)
	}
	for i, plan := range plans {
		for mi, mode := range []memtransport.Options{{}, {Eager: true}, {Seed: 5, Reorder: true}} {
			inputs := make([][]byte, plan.NRanks)
			for r := range inputs {
				inputs[r] = make([]byte, plan.Ranks[r].Sizes.Src)
			}
			job, err := memtransport.NewJob(plan, coll.Int32, coll.Sum, inputs, memtransport.RunOptions{Options: mode})
			require.NoError(t, err)
			for k := 0; k < 3; k++ {
				require.NoError(t, job.Call())
			}
			allocs := testing.AllocsPerRun(50, func() {
				if err := job.Call(); err != nil {
					panic(err)
				}
			})
			job.Close()
			require.Zero(t, allocs, "plan %d mode %d", i, mi)
		}
	}
}

// BenchmarkExecutor runs one whole collective per iteration over the
// in-memory transport and reports allocs/op (0 in steady state).
func BenchmarkExecutor(b *testing.B) {
	for _, c := range []struct {
		name string
		plan *sched.Plan
	}{
		{"allgather_ring_8x4KiB", ringAllgather(8, 4096)},
		{"allreduce_direct_4x64KiB", directAllreduce(4, 64<<10)},
		{"allgather_ring_sched_8x64KiB", generated(b, coll.Allgather, "ring", 2, 4, 64<<10)},
		{"allreduce_parallel_rings_sched_8x1MiB", generated(b, coll.Allreduce, "parallel_rings", 2, 4, 1<<20)},
	} {
		b.Run(c.name, func(b *testing.B) {
			inputs := make([][]byte, c.plan.NRanks)
			for r := range inputs {
				inputs[r] = make([]byte, c.plan.Ranks[r].Sizes.Src)
			}
			job, err := memtransport.NewJob(c.plan, coll.Float32, coll.Sum, inputs, memtransport.RunOptions{})
			require.NoError(b, err)
			defer job.Close()
			require.NoError(b, job.Call())
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := job.Call(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func generated(tb testing.TB, c coll.Collective, alg string, nodes, gpus int, bytes int64) *sched.Plan {
	plan, err := sched.Generate(sched.Spec{Collective: c, Algorithm: alg, Topo: topo.SweepShape(nodes, gpus), Bytes: bytes, DtypeBytes: 4})
	require.NoError(tb, err)
	return plan
}
