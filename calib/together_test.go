package calib

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/model"
)

// The 2xH200 solo fits: direct 390 GB/s, host-staged 51 GB/s in 8 MiB
// chunks.
func h200SoloFits() (direct, host CalibratedPath) {
	direct = CalibratedPath{Path: "direct", From: "GPU 0", To: "GPU 1", AlphaUS: 10, BetaGBps: 390}
	host = CalibratedPath{Path: "host", From: "GPU 0", To: "GPU 1", AlphaUS: 150, BetaGBps: 51, ChunkBytes: 8 << 20}
	return direct, host
}

func TestPlanTogether(t *testing.T) {
	const n = 256 << 20
	o := model.DefaultOptions()
	direct, host := h200SoloFits()
	_, staged := MeasuredPaths(direct, host, o)
	runs := PlanTogether(n, []float64{0, 0.04, 0.08, 0.12, 0.16}, staged, o)
	require.Len(t, runs, 5)
	assert.Equal(t, TogetherRun{Share: 0, DirectBytes: n}, runs[0])
	for i, r := range runs[1:] {
		assert.Equal(t, int64(n), r.DirectBytes+r.StagedBytes, "case %d", i)
		assert.InDelta(t, r.Share*n, float64(r.StagedBytes), 0.5, "case %d", i)
		assert.Equal(t, model.StagedChunks(staged, float64(r.StagedBytes), o), r.Chunks, "case %d: the model's chunk count", i)
		assert.Greater(t, r.Chunks, 1, "case %d: pipelined", i)
		assert.GreaterOrEqual(t, int64(r.Chunks)*r.ChunkBytes, r.StagedBytes, "case %d", i)
		assert.Less(t, int64(r.Chunks-1)*r.ChunkBytes, r.StagedBytes, "case %d: no empty chunk", i)
	}
}

// FitTogether recovers the contention that produced the times, from the
// runs as planned and three rounds of them.
func TestFitTogether(t *testing.T) {
	const n = 256 << 20
	o := model.DefaultOptions()
	direct, host := h200SoloFits()
	dp, sp := MeasuredPaths(direct, host, o)
	truth := model.Contention{DirectSlowdown: 0.03, StagedSlowdown: 0.25}
	sp.Contention = truth
	runs := PlanTogether(n, []float64{0, 0.04, 0.08, 0.12, 0.16}, sp, o)
	times := make([][]float64, TogetherRounds)
	for r := range times {
		for _, run := range runs {
			us := model.OverlapTimeUS([]model.Path{dp, sp}, []float64{float64(run.DirectBytes), float64(run.StagedBytes)}, []int{1, run.Chunks})
			times[r] = append(times[r], us*(1+0.002*float64(r-1)))
		}
	}
	c, err := FitTogether(direct, host, n, runs, times, o)
	require.NoError(t, err)
	assert.Equal(t, "host", c.Path)
	assert.Equal(t, "GPU 0", c.From)
	require.Len(t, c.Samples, 15)
	assert.Equal(t, runs[2].Chunks, c.Samples[2].Chunks)
	assert.InDelta(t, truth.DirectSlowdown, c.DirectSlowdown, 0.01)
	assert.InDelta(t, truth.StagedSlowdown, c.StagedSlowdown, 0.02)
	assert.Empty(t, c.Outliers)

	host.ChunkBytes = 0
	_, err = FitTogether(direct, host, n, runs, times, o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "chunk size")
}
