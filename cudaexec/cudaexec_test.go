package cudaexec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/exec"
	"github.com/goring-hpc/goring/exec/memtransport"
	"github.com/goring-hpc/goring/exec/reduce"
	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

func openGPU(t *testing.T) *GPU {
	t.Helper()
	g, err := Open(0)
	if cuda.IsNoDriver(err) {
		t.Skipf("skipping GPU test: %v", err)
	}
	require.NoError(t, err, "driver present but broken")
	t.Cleanup(func() { require.NoError(t, g.Close()) })
	return g
}

// onGPU adapts a GPU to memtransport.Device: every rank's buffers on GPU
// 0, its copies and reductions on a stream of its own.
type onGPU struct{ g *GPU }

func (o onGPU) Copy(dst, src exec.Region) error { return o.g.Copy(dst, src) }
func (o onGPU) Alloc(_ int, n int64) exec.Region {
	r, err := o.g.Alloc(n)
	if err != nil {
		panic(err)
	}
	return r
}
func (o onGPU) Write(dst exec.Region, b []byte) error { return o.g.Write(dst, b) }
func (o onGPU) Read(src exec.Region) ([]byte, error) {
	b := make([]byte, src.Len())
	return b, o.g.Read(b, src)
}
func (o onGPU) NewLocal() exec.LocalExecutor {
	l, err := o.g.Local()
	if err != nil {
		panic(err)
	}
	return l
}

// Every algorithm of every collective, run whole on one GPU (ranks as
// goroutines, buffers in device memory, copies and reductions as kernels
// on each rank's stream, completions through events), gives byte for
// byte what the same plan gives in host memory.
func TestEveryAlgorithmOnGPUMatchesHost(t *testing.T) {
	g := openGPU(t)
	rng := rand.New(rand.NewPCG(5, 6))
	cases := 0
	start := time.Now()
	for _, n := range []int{2, 3, 4, 8} {
		tp, err := topo.Synthetic(fmt.Sprintf("gpu-%d", n), 1, n, 1)
		require.NoError(t, err)
		for _, c := range []coll.Collective{coll.Allgather, coll.Allreduce, coll.ReduceScatter, coll.Bcast, coll.Alltoallv} {
			for _, alg := range sched.Algorithms(c) {
				for _, elems := range []int64{1, 7, 1001, 65537} {
					dt, op := coll.Uint8, coll.Sum
					if c.Reduces() {
						pairs := [][2]int{{int(coll.Float32), int(coll.Sum)}, {int(coll.Int32), int(coll.Max)}, {int(coll.Float16), int(coll.Sum)}, {int(coll.Bfloat16), int(coll.Prod)}, {int(coll.Uint64), int(coll.Bxor)}, {int(coll.Float64), int(coll.Min)}}
						p := pairs[cases%len(pairs)]
						dt, op = coll.Dtype(p[0]), coll.Op(p[1])
					}
					spec := sched.Spec{Collective: c, Algorithm: alg.Name, Topo: tp, Bytes: elems * int64(dt.Size()), DtypeBytes: dt.Size(), Root: n - 1}
					if c == coll.Alltoallv {
						spec.Counts = make([][]int64, n)
						for i := range spec.Counts {
							spec.Counts[i] = make([]int64, n)
							for j := range spec.Counts[i] {
								spec.Counts[i][j] = rng.Int64N(elems + 1)
							}
						}
					}
					if matchesHost(t, g, rng, spec, dt, op, fmt.Sprintf("%s/%s %d ranks %d elements %v/%v", c, alg.Name, n, elems, dt, op)) {
						cases++
					}
				}
			}
		}
	}
	t.Logf("%d plans on the GPU equal to host memory, %v", cases, time.Since(start).Round(time.Millisecond))
}

// matchesHost generates spec's plan (false: the algorithm does not
// serve it), runs it over inputs of small values (sums and products
// stay exact in float16 and bfloat16) on the GPU (every rank's buffers on
// g, each rank's local steps on a stream of its own) and in host memory,
// and requires the same bytes of every rank.
func matchesHost(t *testing.T, g *GPU, rng *rand.Rand, spec sched.Spec, dt coll.Dtype, op coll.Op, name string) bool {
	t.Helper()
	plan, err := sched.Generate(spec)
	if sched.IsUnsupported(err) {
		return false
	}
	require.NoError(t, err, name)
	in := make([][]byte, plan.NRanks)
	for r := range in {
		in[r] = make([]byte, plan.Ranks[r].Sizes.Src)
		for i := range in[r] {
			in[r][i] = byte(rng.IntN(7))
		}
	}
	want, err := memtransport.RunPlan(plan, dt, op, in)
	require.NoError(t, err, name+" (host)")
	got, err := memtransport.RunPlanWith(plan, dt, op, in, memtransport.RunOptions{Device: onGPU{g}, Timeout: 60 * time.Second})
	require.NoError(t, err, name+" (GPU)")
	for r := range want {
		require.Equal(t, want[r], got[r], "%s: rank %d", name, r)
	}
	return true
}

// A batch of copies is one kernel and one event: nothing is reported
// before every copy has landed, then the batch's one token.
func TestLocalBatch(t *testing.T) {
	g := openGPU(t)
	l, err := g.Local()
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	const rows, row = 3000, 37 // odd rows: unaligned copies
	src, err := g.Alloc(rows * row)
	require.NoError(t, err)
	dst, err := g.Alloc(rows * row)
	require.NoError(t, err)
	in := make([]byte, rows*row)
	for i := range in {
		in[i] = byte(i*7 + 3)
	}
	require.NoError(t, g.Write(src, in))
	p := &sched.RankProgram{Sizes: sched.Sizes{Src: rows * row, Dst: rows * row}}
	b := &exec.Batch{Token: 100, Kind: sched.OpCopy, Prog: p, Bufs: &exec.Buffers{Src: src, Dst: dst}}
	for i := range rows {
		j := rows - 1 - i
		b.Steps = append(b.Steps, int32(p.Copy(sched.Ref{Buf: sched.BufSrc, Off: int64(i * row)}, sched.Ref{Buf: sched.BufDst, Off: int64(j * row)}, row)))
	}
	done, err := l.LocalBatch(b)
	require.NoError(t, err)
	require.False(t, done)
	require.Equal(t, 1, l.Pending(), "one event for the batch")
	var comps []exec.Completion
	for deadline := time.Now().Add(10 * time.Second); len(comps) == 0 && time.Now().Before(deadline); {
		comps = l.Poll(comps)
	}
	require.Len(t, comps, 1)
	require.Equal(t, uint64(100), comps[0].Token)
	require.NoError(t, comps[0].Err)
	got := make([]byte, rows*row)
	require.NoError(t, g.Read(got, dst))
	for i := range rows {
		j := rows - 1 - i
		require.Equal(t, in[i*row:(i+1)*row], got[j*row:(j+1)*row], "row %d", i)
	}
}

// A batch of reductions is one kernel and one event: nothing is reported
// before every reduction has run; two batches over the same rows, one
// after the other, give the host kernels' serial results bit for bit.
func TestLocalReduceBatch(t *testing.T) {
	g := openGPU(t)
	l, err := g.Local()
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	const rows, row = 3000, 37 * 4 // 37 float32s: most rows not 16-byte aligned
	host, err := reduce.Kernel(coll.Float32, coll.Sum)
	require.NoError(t, err)
	src, err := g.Alloc(2 * rows * row)
	require.NoError(t, err)
	dst, err := g.Alloc(rows * row)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(4, 2))
	in, want := make([]byte, 2*rows*row), make([]byte, rows*row)
	for i := 0; i < len(in); i += 4 {
		binary.LittleEndian.PutUint32(in[i:], math.Float32bits(float32(rng.NormFloat64()*1e3)))
	}
	for i := 0; i < len(want); i += 4 {
		binary.LittleEndian.PutUint32(want[i:], math.Float32bits(float32(rng.NormFloat64())))
	}
	require.NoError(t, g.Write(src, in))
	require.NoError(t, g.Write(dst, want))
	p := &sched.RankProgram{Sizes: sched.Sizes{Src: 2 * rows * row, Dst: rows * row}}
	bufs := &exec.Buffers{Src: src, Dst: dst}
	for b := range 2 {
		batch := &exec.Batch{Token: uint64(100 * (b + 1)), Kind: sched.OpReduce, Dtype: coll.Float32, Op: coll.Sum, Prog: p, Bufs: bufs}
		for i := range rows {
			j := rows - 1 - i
			s := (b*rows + i) * row
			batch.Steps = append(batch.Steps, int32(p.Reduce(sched.Ref{Buf: sched.BufSrc, Off: int64(s)}, sched.Ref{Buf: sched.BufDst, Off: int64(j * row)}, row)))
			host(want[j*row:(j+1)*row], in[s:s+row])
		}
		done, err := l.LocalBatch(batch)
		require.NoError(t, err)
		require.False(t, done)
	}
	require.Equal(t, 2, l.Pending(), "one event a batch")
	var comps []exec.Completion
	for deadline := time.Now().Add(10 * time.Second); len(comps) < 2 && time.Now().Before(deadline); {
		comps = l.Poll(comps)
	}
	require.Len(t, comps, 2)
	for b, c := range comps {
		require.Equal(t, uint64(100*(b+1)), c.Token)
		require.NoError(t, c.Err)
	}
	got := make([]byte, rows*row)
	require.NoError(t, g.Read(got, dst))
	for j := range rows {
		require.Equal(t, want[j*row:(j+1)*row], got[j*row:(j+1)*row], "row %d", j)
	}
	mixed := &sched.RankProgram{Sizes: p.Sizes}
	r := mixed.Reduce(sched.Ref{Buf: sched.BufSrc}, sched.Ref{Buf: sched.BufDst}, 4)
	c := mixed.Copy(sched.Ref{Buf: sched.BufSrc, Off: 4}, sched.Ref{Buf: sched.BufDst, Off: 4}, 4)
	_, err = l.LocalBatch(&exec.Batch{Token: 1, Kind: sched.OpReduce, Dtype: coll.Float32, Op: coll.Sum, Prog: mixed, Bufs: bufs, Steps: []int32{int32(r), int32(c)}})
	require.ErrorContains(t, err, "in a batch of", "a batch is of one kind")
}

// LocalBatch refuses, before it touches the device, a batch that is not
// of one kind, a step outside its buffers or naming none, and a step of
// bytes in a buffer that is not CUDA memory (checked once per buffer);
// a step of no bytes needs no memory. No GPU needed.
func TestLocalBatchChecks(t *testing.T) {
	l := &Local{}
	cudaAt := func(at uintptr, n int64) exec.Region { return exec.DeviceRegion(exec.CUDA(0), at, n) }
	bufs := &exec.Buffers{Src: cudaAt(1<<30, 64), Dst: cudaAt(2<<30, 64), Scratch: exec.HostRegion(make([]byte, 64))}
	ref := func(b sched.Buf, off int64) sched.Ref { return sched.Ref{Buf: b, Off: off} }
	p := &sched.RankProgram{Sizes: sched.Sizes{Src: 64, Dst: 64, Scratch: 64}}
	c0 := int32(p.Copy(ref(sched.BufSrc, 0), ref(sched.BufDst, 0), 8))
	red := int32(p.Reduce(ref(sched.BufSrc, 8), ref(sched.BufDst, 8), 8))
	over := int32(p.Copy(ref(sched.BufSrc, 60), ref(sched.BufDst, 16), 8))
	toHost := int32(p.Copy(ref(sched.BufSrc, 24), ref(sched.BufScratch, 0), 8))
	empty := int32(p.Copy(ref(sched.BufSrc, 0), ref(sched.BufScratch, 0), 0))
	noBuf := int32(p.Copy(ref(sched.BufSrc, 0), ref(sched.BufDst, 32), 8))
	p.Steps[noBuf].DstBuf = 0
	for _, c := range []struct {
		steps []int32
		kind  sched.StepOp
		want  string
	}{
		{[]int32{c0, red}, sched.OpCopy, "in a batch of"},
		{[]int32{c0}, sched.OpSend, "a batch of send"},
		{[]int32{c0, over}, sched.OpCopy, "outside its buffers"},
		{[]int32{noBuf}, sched.OpCopy, "outside its buffers"},
		{[]int32{c0, toHost}, sched.OpCopy, "scratch buffer on host"},
	} {
		_, err := l.LocalBatch(&exec.Batch{Token: 1, Kind: c.kind, Prog: p, Bufs: bufs, Steps: c.steps})
		require.ErrorContains(t, err, c.want, "steps %v", c.steps)
	}
	done, err := l.LocalBatch(&exec.Batch{Token: 1, Kind: sched.OpCopy, Prog: p, Bufs: bufs, Steps: []int32{empty, empty}})
	require.NoError(t, err, "no bytes: no memory to check, nothing to run")
	require.True(t, done)
}

// Dispatch and combine, whose programs are hundreds of row copies and
// (combine) row reductions that the Machine hands over in batches, give
// on the GPU byte for byte what they give in host memory.
func TestMoEOnGPUMatchesHost(t *testing.T) {
	g := openGPU(t)
	rng := rand.New(rand.NewPCG(3, 9))
	for _, n := range []int{2, 4} {
		for _, c := range []coll.Collective{coll.Dispatch, coll.Combine} {
			for _, alg := range sched.Algorithms(c) {
				d, H := coll.Uint8, int64(37)
				if c == coll.Combine {
					d, H = coll.Bfloat16, 64
				}
				r, err := moe.Generate(moe.Options{NRanks: n, TokensPerRank: 500, TokenBytes: H, TopK: 2, Experts: 2 * n, Hot: map[int]float64{0: 0.5}, Seed: uint64(n)})
				require.NoError(t, err)
				spec := sched.Spec{Collective: c, Algorithm: alg.Name, Topo: topo.SweepShape(1, n), DtypeBytes: d.Size(), Routing: r}
				matchesHost(t, g, rng, spec, d, coll.Sum, fmt.Sprintf("%s/%s on %d ranks", c, alg.Name, n))
			}
		}
	}
}
