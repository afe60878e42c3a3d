package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/model"
)

func TestParseShares(t *testing.T) {
	got, err := parseShares("0,4,8,12,16")
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 0.04, 0.08, 0.12, 0.16}, got)
	got, err = parseShares(" 6%, 10 ,6")
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 0.06, 0.10}, got, "share 0 added, duplicates dropped")
	for i, bad := range []string{"4", "0,4", "4,4", "4,100", "4,-1", "4,x", ""} {
		_, err := parseShares(bad)
		assert.Error(t, err, "case %d: %q", i, bad)
	}
}

// The 2xH200 solo fits: direct 390 GB/s, host-staged 51 GB/s in 8 MiB
// chunks.
func h200SoloFits() (direct, host model.CalibratedPath) {
	direct = model.CalibratedPath{Path: "direct", From: "GPU 0", To: "GPU 1", AlphaUS: 10, BetaGBps: 390}
	host = model.CalibratedPath{Path: "host", From: "GPU 0", To: "GPU 1", AlphaUS: 150, BetaGBps: 51, ChunkBytes: 8 << 20}
	return direct, host
}

func TestPlanTogether(t *testing.T) {
	const n = 256 << 20
	o := model.DefaultOptions()
	direct, host := h200SoloFits()
	_, staged := measuredPaths(direct, host, o)
	runs := planTogether(n, []float64{0, 0.04, 0.08, 0.12, 0.16}, staged, o)
	require.Len(t, runs, 5)
	assert.Equal(t, togetherRun{share: 0, directBytes: n}, runs[0])
	for i, r := range runs[1:] {
		assert.Equal(t, int64(n), r.directBytes+r.stagedBytes, "case %d", i)
		assert.InDelta(t, r.share*n, float64(r.stagedBytes), 0.5, "case %d", i)
		assert.Equal(t, model.StagedChunks(staged, float64(r.stagedBytes), o), r.chunks, "case %d: the model's chunk count", i)
		assert.Greater(t, r.chunks, 1, "case %d: pipelined", i)
		assert.GreaterOrEqual(t, int64(r.chunks)*r.chunkBytes, r.stagedBytes, "case %d", i)
		assert.Less(t, int64(r.chunks-1)*r.chunkBytes, r.stagedBytes, "case %d: no empty chunk", i)
	}
}

// fitTogether recovers the contention that produced the times, from the
// runs as planned and three rounds of them.
func TestFitTogether(t *testing.T) {
	const n = 256 << 20
	o := model.DefaultOptions()
	direct, host := h200SoloFits()
	dp, sp := measuredPaths(direct, host, o)
	truth := model.Contention{DirectSlowdown: 0.03, StagedSlowdown: 0.25}
	sp.Contention = truth
	runs := planTogether(n, []float64{0, 0.04, 0.08, 0.12, 0.16}, sp, o)
	times := make([][]float64, togetherRounds)
	for r := range times {
		for _, run := range runs {
			us := model.OverlapTimeUS([]model.Path{dp, sp}, []float64{float64(run.directBytes), float64(run.stagedBytes)}, []int{1, run.chunks})
			times[r] = append(times[r], us*(1+0.002*float64(r-1)))
		}
	}
	c, err := fitTogether(direct, host, n, runs, times, o)
	require.NoError(t, err)
	assert.Equal(t, "host", c.Path)
	assert.Equal(t, "GPU 0", c.From)
	require.Len(t, c.Samples, 15)
	assert.Equal(t, runs[2].chunks, c.Samples[2].Chunks)
	assert.InDelta(t, truth.DirectSlowdown, c.DirectSlowdown, 0.01)
	assert.InDelta(t, truth.StagedSlowdown, c.StagedSlowdown, 0.02)
	assert.Empty(t, c.Outliers)

	host.ChunkBytes = 0
	_, err = fitTogether(direct, host, n, runs, times, o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "chunk size")
}

func TestCalibrateTableShowsContention(t *testing.T) {
	doc, err := os.ReadFile("../../model/testdata/calibration_h200x2.json")
	require.NoError(t, err)
	cal, err := model.ParseCalibration(doc)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, writeCalibration(&out, &calibrateFlags{}, cal))
	s := out.String()
	assert.Contains(t, s, "# together: direct + host GPU 0 -> GPU 1, launched at once")
	assert.Contains(t, s, "1.070x", "6% on the host path: 1.070x the direct copy alone")
	assert.Contains(t, s, "0.790x")
	assert.Contains(t, s, "the direct path loses 0.0% of its bandwidth and the host path 21.9% of its own")
}
