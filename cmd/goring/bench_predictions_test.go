package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/topo"
)

// The prediction block compares like with like: Measured (the average
// over ranks) with the simulated ranks' average finish (PredAvg,
// meas/pred), the slowest rank with the simulated slowest (max/pred).
// leader's ranks finish far apart, so the two statistics differ and
// mixing them would show. The row keeps TestBenchNetnsSmall's four
// numbers.
func TestWritePredictionsLikeWithLike(t *testing.T) {
	host, err := topo.MeasuredTestbed(2, 2, 2, "1gbit", topo.TestbedRailAlphaUS)
	require.NoError(t, err)
	gpu, err := topo.MeasuredGPUTestbed(2, 2, 2, "1gbit", topo.TestbedRailAlphaUS)
	require.NoError(t, err)
	cfg := bench.Config{Topo: host, PredictTopo: gpu, Collective: coll.Allgather, Dtype: coll.Float32}
	pred, err := cfg.Predict("leader", 4<<20, 0)
	require.NoError(t, err)
	require.Less(t, pred.MeanUS, 0.9*pred.SlowestUS)
	row := bench.Row{Algorithm: "leader", Bytes: 4 << 20, AvgUS: 1.1 * pred.MeanUS, MaxUS: 0.95 * pred.SlowestUS}

	var out bytes.Buffer
	require.NoError(t, writePredictions(&out, cfg, []bench.Row{row}))
	assert.Contains(t, out.String(), "PredAvg(us)")
	m := regexp.MustCompile(`(?m)^leader +4194304 +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+)$`).FindStringSubmatch(out.String())
	require.NotNil(t, m, out.String())
	num := func(i int) float64 {
		v, err := strconv.ParseFloat(m[i], 64)
		require.NoError(t, err)
		return v
	}
	assert.Equal(t, fmt.Sprintf("%.2f", row.AvgUS), m[1])
	assert.Equal(t, fmt.Sprintf("%.2f", pred.MeanUS), m[2])
	assert.InDelta(t, 1.1, num(3), 0.0005, "meas/pred: average over average")
	assert.InDelta(t, 0.95, num(4), 0.0005, "max/pred: slowest over slowest")
}
