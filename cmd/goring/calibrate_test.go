package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/calib"
)

// calibrate over two real processes: one JSON document, a sample per size,
// a fit with positive alpha and beta, the same document in --out, and the
// GPU paths reported as skipped rather than invented.
func TestCalibrateHostPath(t *testing.T) {
	needUCX(t)
	file := filepath.Join(t.TempDir(), "cal.json")
	stdout, stderr, code := runCLI(t, "calibrate", "--bytes", "1KiB,64KiB,256KiB,1MiB", "--iters", "20", "--warmup", "2", "--json", "--out", file)
	require.Zero(t, code, stderr)
	var cal calib.Calibration
	require.NoError(t, json.Unmarshal([]byte(stdout), &cal), stdout)
	assert.Equal(t, calib.Schema, cal.Schema)
	require.Len(t, cal.Paths, 1)
	p := cal.Paths[0]
	assert.Equal(t, "host", p.Path)
	require.Len(t, p.Samples, 4)
	for i, s := range p.Samples {
		assert.Positive(t, s.US, "case %d", i)
	}
	assert.Equal(t, int64(1<<20), p.Samples[3].Bytes)
	assert.Positive(t, p.BetaGBps)
	assert.GreaterOrEqual(t, p.AlphaUS, 0.0)
	require.NotEmpty(t, cal.Skipped)
	assert.Contains(t, cal.Skipped[0], "GPU paths")
	written, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.JSONEq(t, stdout, string(written))
}

func TestCalibrateBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "--bytes", "4KiB"}, "at least two distinct sizes"},
		{[]string{"calibrate", "--bytes", "4KiB,4KiB"}, "at least two distinct sizes"},
		{[]string{"calibrate", "--bytes", "0,8"}, "sizes must be positive"},
		{[]string{"calibrate", "--bytes", "1Q:2"}, "--bytes"},
		{[]string{"calibrate", "extra"}, "unknown command"},
		{[]string{"calibrate", "--gpu-bytes", "1MiB"}, "--gpu-bytes: a fit needs at least two distinct sizes"},
		{[]string{"calibrate", "--chunk", "0"}, "--chunk"},
		{[]string{"calibrate", "--gpu-iters", "0"}, "--gpu-iters 0"},
		// Negative counts are refused as bench refuses them, not read as
		// OMB's defaults.
		{[]string{"calibrate", "--iters", "-5"}, "--iters -5"},
		{[]string{"calibrate", "--warmup", "-3"}, "--warmup -3"},
		{[]string{"calibrate", "--shares", "8"}, "at least two positive shares"},
		{[]string{"calibrate", "--shares", "4,eight"}, `"eight" is not a percentage`},
	}
	for i, c := range cases {
		_, stderr, code := runCLI(t, c.args...)
		assert.NotZero(t, code, "case %d", i)
		assert.Contains(t, stderr, c.want, "case %d", i)
	}
}

// The document moved into package model; what calibrate writes did not
// change: the golden file written by calibrate's encoder before the move
// comes out byte for byte, on stdout and in --out.
func TestCalibrateWritesSameBytes(t *testing.T) {
	golden, err := os.ReadFile("../../calib/testdata/calibration_v1.golden.json")
	require.NoError(t, err)
	cal, err := calib.Parse(golden)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "cal.json")
	var out bytes.Buffer
	require.NoError(t, writeCalibration(&out, &calibrateFlags{json: true, out: file}, cal))
	assert.Equal(t, string(golden), out.String())
	written, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, string(golden), string(written))
}
