package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/calib"
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

func TestCalibrateTableShowsContention(t *testing.T) {
	doc, err := os.ReadFile("../../calib/testdata/calibration_h200x2.json")
	require.NoError(t, err)
	cal, err := calib.Parse(doc)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, writeCalibration(&out, &calibrateFlags{}, cal))
	s := out.String()
	assert.Contains(t, s, "# together: direct + host GPU 0 -> GPU 1, launched at once")
	assert.Contains(t, s, "1.070x", "6% on the host path: 1.070x the direct copy alone")
	assert.Contains(t, s, "0.790x")
	assert.Contains(t, s, "the direct path loses 0.0% of its bandwidth and the host path 21.9% of its own")
}
