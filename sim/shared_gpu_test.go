package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/topo"
)

// The h100-shared4 preset against what four processes on one H100 measured
// (goring bench --mem cuda --gpus 1 --np 4, one piece, the GPU polled every
// 2 us; GPU 0 of a 2xH100, 2026-11-25, docs/gpu.md "One GPU in the
// simulator"). The preset's two figures were fitted to
// multiwrite alone; the allreduce rows are the check: within 15% at every
// size from 16 MiB. Algorithms whose steps wait on several processes in turn
// (lane's reductions, parallel_rings' intra-node phase) are not: measured
// 1.25-2.3x the prediction in an earlier run, which the preset does not
// model (docs/gpu.md says why).
func TestSharedH100x4AgainstMeasured(t *testing.T) {
	tp, err := topo.Preset("h100-shared4")
	require.NoError(t, err)
	sizes := []int64{16 << 20, 64 << 20, 128 << 20, 256 << 20}
	measured := []struct {
		c   coll.Collective
		alg string
		us  []float64
	}{
		{coll.Allgather, "multiwrite", []float64{782.1, 1280.2, 1906.7, 3309.6}},
		{coll.Allreduce, "ring", []float64{4288.4, 4639.4, 5442.4, 6161.1}},
		{coll.Allreduce, "rabenseifner", []float64{2762.1, 3123.9, 3614.8, 4446.5}},
		{coll.Allreduce, "recursive_doubling", []float64{1639.7, 2236.8, 2965.6, 4647.9}},
	}
	for _, m := range measured {
		for i, b := range sizes {
			r, _, err := Run(sched.Spec{Collective: m.c, Algorithm: m.alg, Topo: tp, Bytes: b, DtypeBytes: 4}, Options{})
			require.NoError(t, err)
			assert.InEpsilon(t, m.us[i], r.TotalUS, 0.15, "%v %s %d MiB: measured %.0f us, predicted %.0f", m.c, m.alg, b>>20, m.us[i], r.TotalUS)
		}
	}
}

// A GPU shared by N processes gives each a N-th of its copy and reduction
// rates: the same local copy takes N times as long.
func TestSharedGPUDividesTheMemoryRates(t *testing.T) {
	one, err := topo.Preset("h100x2")
	require.NoError(t, err)
	shared, err := topo.Preset("h100-shared4")
	require.NoError(t, err)
	o := Options{}
	c1, r1 := o.copyRates(one)
	c4, r4 := o.copyRates(shared)
	assert.InDelta(t, c1[0]/4, c4[0], 1e-9)
	assert.InDelta(t, r1[0]/4, r4[0], 1e-9)
}
