package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// testbed22 is 2 nodes x 2 ranks x 2 rails at 1 Gbit/s with the measured
// figures, in the host form or the GPU form.
func testbed22(t *testing.T, gpu bool) *topo.Topology {
	t.Helper()
	tb := topo.MeasuredTestbed
	if gpu {
		tb = topo.MeasuredGPUTestbed
	}
	tp, err := tb(2, 2, 2, "1gbit", topo.TestbedRailAlphaUS)
	require.NoError(t, err)
	return tp
}

// On the GPU testbed the rail-balanced algorithms run at their rails'
// bound, where the host testbed's copy link slows them: the bytes between
// two GPUs of a node move over NVLink, and the CPU copies rail bytes only.
//   - allgather parallel_rings: each node receives the other node's 2
//     blocks over its 2 rails, B / 0.125 GB/s;
//   - allreduce lane and parallel_rings: each node sends and receives half
//     the vector twice (reduce-scatter, then allgather, between the nodes)
//     over 2 rails, B / (2 x 0.125 GB/s).
func TestTestbedGPUAtRailBound(t *testing.T) {
	const rail = 0.125e3 // bytes per µs
	for _, c := range []struct {
		c     coll.Collective
		alg   string
		bound func(b float64) float64
	}{
		{coll.Allgather, "parallel_rings", func(b float64) float64 { return b / rail }},
		{coll.Allreduce, "lane", func(b float64) float64 { return b / (2 * rail) }},
		{coll.Allreduce, "parallel_rings", func(b float64) float64 { return b / (2 * rail) }},
	} {
		for _, b := range []int64{4 << 20, 64 << 20} {
			spec := sched.Spec{Collective: c.c, Algorithm: c.alg, Bytes: b, DtypeBytes: 4}
			spec.Topo = testbed22(t, true)
			gpu, _, err := Run(spec, Options{})
			require.NoError(t, err)
			spec.Topo = testbed22(t, false)
			host, _, err := Run(spec, Options{})
			require.NoError(t, err)
			bound := c.bound(float64(b))
			assert.GreaterOrEqual(t, gpu.TotalUS, bound, "%s %s %d", c.c, c.alg, b)
			assert.LessOrEqual(t, gpu.TotalUS, 1.02*bound, "%s %s %d: within 2%% of the rails' bound", c.c, c.alg, b)
			assert.Greater(t, host.TotalUS, 1.05*gpu.TotalUS, "%s %s %d: the host form's copy link slows it", c.c, c.alg, b)
		}
	}
}
