package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// benchPlan generates an allgather plan on clusterB with nodes nodes, or
// skips when the algorithm is not registered (yet).
func benchPlan(b *testing.B, alg string, nodes int, bytes int64) (*topo.Topology, *sched.Plan) {
	b.Helper()
	if _, err := sched.Lookup(coll.Allgather, alg); err != nil {
		b.Skip(err)
	}
	tp, err := topo.Preset("clusterB")
	require.NoError(b, err)
	tp, err = tp.Repeat(nodes)
	require.NoError(b, err)
	plan, err := sched.Generate(sched.Spec{Collective: coll.Allgather, Algorithm: alg, Topo: tp, Bytes: bytes, DtypeBytes: 4})
	require.NoError(b, err)
	return tp, plan
}

func benchSimulate(b *testing.B, alg string, nodes int, bytes int64) {
	tp, plan := benchPlan(b, alg, nodes, bytes)
	steps := 0
	for _, r := range plan.Ranks {
		steps += len(r.Steps)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var res *Result
	for range b.N {
		var err error
		res, err = Simulate(tp, plan, Options{})
		require.NoError(b, err)
	}
	b.ReportMetric(float64(steps), "steps")
	b.ReportMetric(res.TotalUS, "predicted_us")
}

// The simulator's speed goal: parallel_rings allgather on 64 GPUs
// (clusterB x16) at 256 MB simulates in under 2 s.
func BenchmarkParallelRings64GPUs256MB(b *testing.B) {
	benchSimulate(b, "parallel_rings", 16, 256<<20)
}

// And 4096 GPUs (clusterB x1024) at 64 MB in under 60 s.
func BenchmarkParallelRings4096GPUs64MB(b *testing.B) {
	if testing.Short() {
		b.Skip("4096 GPUs: long")
	}
	benchSimulate(b, "parallel_rings", 1024, 64<<20)
}

func BenchmarkRing64GPUs256MB(b *testing.B) {
	benchSimulate(b, "ring", 16, 256<<20)
}
