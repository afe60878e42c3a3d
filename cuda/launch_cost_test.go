package cuda

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/devsync"
)

// TestNodeLaunchHostTime measures the host's side of a small node call:
// how long NodeLaunchAsync holds the calling thread (the driver's launch
// and goring's checks), beside the same for a stream-ordered memset and a
// reduction kernel (ReduceAsync) on the same stream, each with its stream
// drained between calls so that no queue is full. Medians of 2000 calls.
// The team layer pays the launch on every CUDA call's post (docs/gpu.md
// "Small calls on two H200s").
func TestNodeLaunchHostTime(t *testing.T) {
	if os.Getenv(envBench) == "" {
		t.Skipf("set %s=1 to measure", envBench)
	}
	skipOnOneGPUTeam(t)
	devs := nodeGPUs(t)[:2]
	tm := newNodeTeam(t, devs, 1<<20, 1<<20)
	const n = 2000
	median := func(f func() error) float64 {
		ds := make([]time.Duration, n)
		for i := range ds {
			s := time.Now()
			require.NoError(t, f())
			ds[i] = time.Since(s)
			tm.sync(t, 10*time.Second)
		}
		slices.Sort(ds)
		return float64(ds[n/2].Nanoseconds()) / 1e3
	}
	c := nodeCallSpec{alg: devsync.OneShotAllreduce, dt: coll.Float32, op: coll.Sum, count: 4096, grid: DefaultNodeGrid(16 << 10)}
	// Rank 0's launch is timed; rank 1's follows after the clock stops,
	// so that the call can complete before the streams are drained.
	var ds []time.Duration
	for range n {
		tm.epoch = tm.epoch.Next()
		s := time.Now()
		require.NoError(t, tm.launchRank(c, 0))
		ds = append(ds, time.Since(s))
		require.NoError(t, tm.launchRank(c, 1))
		tm.sync(t, 10*time.Second)
	}
	slices.Sort(ds)
	node := float64(ds[n/2].Nanoseconds()) / 1e3
	memset := median(func() error { return tm.out[0].MemsetAsync(tm.streams[0], 0, 16<<10, 1) })
	reduce := median(func() error {
		return ReduceAsync(tm.streams[0], tm.out[0], 0, tm.in[0], 0, 16<<10, coll.Float32, coll.Sum)
	})
	fmt.Printf("host time per call on %s, medians of %d (us): node kernel launch %.2f, memset %.2f, reduction kernel launch %.2f\n",
		must(devs[0].Name()), n, node, memset, reduce)
}
