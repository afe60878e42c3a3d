package calib

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goldenCalibration is the document of testdata/calibration_v1.golden.json
// as a value. The golden file was written by `goring calibrate`'s encoder
// before the document moved into this package; encoding this value must
// still give those bytes.
func goldenCalibration() *Calibration {
	return &Calibration{Schema: Schema, Host: "h200-node", Date: "2025-01-02T03:04:05Z", UCXTLS: "self,sm",
		Paths: []CalibratedPath{
			{Path: "host", From: "process 0 (host memory)", To: "process 1 (host memory)", AlphaUS: 0.8125, BetaGBps: 11.5, RelRMS: 0.021, Outliers: []int64{},
				Samples: []CalibratedSample{{Bytes: 1024, US: 0.9}, {Bytes: 1 << 20, US: 92.0625}}},
			{Path: "direct", From: "GPU 0", To: "GPU 1", AlphaUS: 9.5, BetaGBps: 390.25, RelRMS: 0.004, Outliers: []int64{268435456},
				Samples: []CalibratedSample{{Bytes: 1 << 20, US: 12.2}, {Bytes: 16 << 20, US: 52.5}, {Bytes: 256 << 20, US: 700.5}}},
			{Path: "host", From: "GPU 0", To: "GPU 1", AlphaUS: 160, BetaGBps: 51, RelRMS: 0.01, Outliers: []int64{},
				Samples: []CalibratedSample{{Bytes: 1 << 20, US: 45}, {Bytes: 256 << 20, US: 5400}}},
		},
		Skipped: []string{"GPU-staged paths: two GPUs"}}
}

func TestCalibrationGoldenBytes(t *testing.T) {
	for _, name := range []string{"calibration_v1.golden.json", "calibration_v1_host_only.golden.json", "calibration_h200x2.json"} {
		golden, err := os.ReadFile("testdata/" + name)
		require.NoError(t, err)
		cal, err := Parse(golden)
		require.NoError(t, err, name)
		out, err := cal.Encode()
		require.NoError(t, err)
		assert.Equal(t, string(golden), string(out), "%s: a round trip gives the same bytes", name)
	}
	golden, err := os.ReadFile("testdata/calibration_v1.golden.json")
	require.NoError(t, err)
	out, err := goldenCalibration().Encode()
	require.NoError(t, err)
	assert.Equal(t, string(golden), string(out), "the encoder writes what calibrate wrote before the move")
	cal, err := Load(bytes.NewReader(golden))
	require.NoError(t, err)
	assert.Equal(t, goldenCalibration(), cal)
}

func TestCalibrationRejectsBadDocuments(t *testing.T) {
	golden, err := os.ReadFile("testdata/calibration_v1.golden.json")
	require.NoError(t, err)
	doc := string(golden)
	cases := []struct{ doc, want string }{
		{"", "calibration JSON"},
		{"{", "calibration JSON"},
		{doc + "{}", "trailing data"},
		{strings.Replace(doc, "goring.calibration/v1", "goring.calibration/v9", 1), `schema "goring.calibration/v9"`},
		{strings.Replace(doc, `"beta_GBps": 390.25`, `"beta_GBps": 0`, 1), "paths[1] (direct GPU 0 -> GPU 1)"},
		{strings.Replace(doc, `"alpha_us": 9.5`, `"alpha_us": -1`, 1), "want a finite alpha >= 0"},
		{strings.Replace(doc, `"us": 12.2`, `"us": 0`, 1), "samples[0]"},
		{strings.Replace(doc, `"bytes": 1024`, `"bytes": -5`, 1), "samples[0]"},
		{strings.Replace(doc, `"path": "direct"`, `"path": ""`, 1), "must be named"},
		{strings.Replace(doc, `"rel_rms": 0.004`, `"rel_rms": -0.5`, 1), "rel_rms"},
		{strings.Replace(doc, `"alpha_us": 9.5`, `"alpha_us": "fast"`, 1), "calibration JSON"},
	}
	for i, c := range cases {
		_, err := Parse([]byte(c.doc))
		require.Error(t, err, "case %d", i)
		assert.Contains(t, err.Error(), c.want, "case %d", i)
	}
	fixture, err := os.ReadFile("testdata/calibration_h200x2.json")
	require.NoError(t, err)
	for i, c := range []struct{ doc, want string }{
		{strings.Replace(string(fixture), `"gpus": 2`, `"gpus": -2`, 1), "gpus -2"},
		{strings.Replace(string(fixture), `"chunk_bytes": 8388608`, `"chunk_bytes": -1`, 1), "chunk_bytes -1"},
		{strings.Replace(string(fixture), `"staged_slowdown": 0.219`, `"staged_slowdown": 1`, 1), "contention[0] (direct with host, GPU 0 -> GPU 1): slowdowns"},
		{strings.Replace(string(fixture), `"direct_slowdown": 0`, `"direct_slowdown": -0.1`, 1), "want each in [0, 1)"},
		{strings.Replace(string(fixture), `"share": 0.1,`, `"share": 1.5,`, 1), "samples[3]"},
		{strings.Replace(string(fixture), `"outlier_samples": []`, `"outlier_samples": [7]`, 1), "index 7 outside the 5 samples"},
	} {
		require.NotEqual(t, string(fixture), c.doc, "case %d: the replacement must apply", i)
		_, err := Parse([]byte(c.doc))
		require.Error(t, err, "case %d", i)
		assert.Contains(t, err.Error(), c.want, "case %d", i)
	}
	// Fields this reader does not know are accepted: later v1 writers may
	// add optional ones.
	cal, err := Parse([]byte(strings.Replace(doc, `"host": "h200-node",`, `"host": "h200-node", "future_field": {"x": 1},`, 1)))
	require.NoError(t, err)
	assert.Equal(t, "h200-node", cal.Host)
}

func TestCalibratedPathFit(t *testing.T) {
	p := CalibratedPath{Path: "direct", From: "GPU 0", To: "GPU 1"}
	for _, n := range []int64{1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20} {
		us := 10 + float64(n)/390e3
		if n == 16<<20 {
			us *= 3 // one run on a busy machine
		}
		p.Samples = append(p.Samples, CalibratedSample{Bytes: n, US: us})
	}
	require.NoError(t, p.Fit())
	assert.InDelta(t, 10, p.AlphaUS, 0.01)
	assert.InDelta(t, 390, p.BetaGBps, 0.01)
	assert.Equal(t, []int64{16 << 20}, p.Outliers)
	p.Samples = p.Samples[:1]
	err := p.Fit()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fitting path direct GPU 0 -> GPU 1")
}
