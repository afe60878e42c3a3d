package sched

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

func clusterBNodes(tb testing.TB, nodes int) *topo.Topology {
	tb.Helper()
	b, err := topo.Preset("clusterB")
	require.NoError(tb, err)
	tp, err := b.Repeat(nodes)
	require.NoError(tb, err)
	return tp
}

// Generate and verify the parallel_rings allgather of 64 ranks (16 nodes x
// 4 clusterB GPUs, the Parallel Rings paper's largest run). Target: under 5 ms per op.
func BenchmarkParallelRingsAllgather64GenerateVerify(b *testing.B) {
	spec := Spec{Collective: coll.Allgather, Algorithm: "parallel_rings", Topo: clusterBNodes(b, 16), Bytes: 64 << 20, DtypeBytes: 4}
	b.ReportAllocs()
	for b.Loop() {
		plan, err := Generate(spec)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Verify(plan); err != nil {
			b.Fatal(err)
		}
	}
}

// Generate alone for the same 64 ranks, to split the cost above.
func BenchmarkParallelRingsAllgather64Generate(b *testing.B) {
	spec := Spec{Collective: coll.Allgather, Algorithm: "parallel_rings", Topo: clusterBNodes(b, 16), Bytes: 64 << 20, DtypeBytes: 4}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Generate(spec); err != nil {
			b.Fatal(err)
		}
	}
}

// Generate the parallel_rings allgather for 4096 ranks (1024 nodes x 4
// clusterB GPUs). Target: under 1 s and 1 GiB per op.
//
// The whole plan has 4096 x 8191 steps = 33.5 M steps, 1.6 GB at 48 bytes a
// step, more than 1 GiB, so this benchmarks the per-rank path a real job
// uses (Algorithm.Rank, as GenerateRank does): every rank's program is built
// in turn into one reused RankProgram, which is the work of all 4096 ranks
// with the memory of one.
func BenchmarkParallelRingsAllgather4096PerRank(b *testing.B) {
	spec := Spec{Collective: coll.Allgather, Algorithm: "parallel_rings", Topo: clusterBNodes(b, 1024), Bytes: 64 << 20, DtypeBytes: 4}
	a, err := Lookup(coll.Allgather, "parallel_rings")
	require.NoError(b, err)
	require.NoError(b, validateSpec(&spec))
	plan := newPlan(&spec, a.Name)
	var work RankProgram
	steps := 0
	b.ReportAllocs()
	for b.Loop() {
		steps = 0
		for r := range plan.Ranks {
			resetProgram(&work, &plan.Ranks[r])
			if err := a.Rank(&spec, plan, &work); err != nil {
				b.Fatal(err)
			}
			steps += len(work.Steps)
		}
	}
	b.ReportMetric(float64(steps), "steps/op")
}

// The same, with one worker per CPU (GOMAXPROCS), each building ranks into
// its own reused program: ranks are independent, as they are in a job.
func BenchmarkParallelRingsAllgather4096PerRankParallel(b *testing.B) {
	spec := Spec{Collective: coll.Allgather, Algorithm: "parallel_rings", Topo: clusterBNodes(b, 1024), Bytes: 64 << 20, DtypeBytes: 4}
	a, err := Lookup(coll.Allgather, "parallel_rings")
	require.NoError(b, err)
	require.NoError(b, validateSpec(&spec))
	plan := newPlan(&spec, a.Name)
	workers := runtime.GOMAXPROCS(0)
	work := make([]RankProgram, workers)
	var steps atomic.Int64
	b.ReportAllocs()
	for b.Loop() {
		steps.Store(0)
		var wg sync.WaitGroup
		errs := make([]error, workers)
		for w := range workers {
			wg.Go(func() {
				n := 0
				for r := w; r < len(plan.Ranks); r += workers {
					resetProgram(&work[w], &plan.Ranks[r])
					if err := a.Rank(&spec, plan, &work[w]); err != nil {
						errs[w] = err
						return
					}
					n += len(work[w].Steps)
				}
				steps.Add(int64(n))
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(steps.Load()), "steps/op")
}

// The same 4096-rank plan built whole by Generate would hold every step at
// once; this one uses 256 nodes (1024 ranks, 8.4 M steps, ~420 MB) to show
// the whole-plan path's cost per step.
func BenchmarkParallelRingsAllgather1024Generate(b *testing.B) {
	spec := Spec{Collective: coll.Allgather, Algorithm: "parallel_rings", Topo: clusterBNodes(b, 256), Bytes: 64 << 20, DtypeBytes: 4}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Generate(spec); err != nil {
			b.Fatal(err)
		}
	}
}
