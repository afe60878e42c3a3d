package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The JSON contract of goring model split --json, key for key.
func TestModelSplitJSONContract(t *testing.T) {
	stdout, stderr, code := runCLI(t, "model", "split", "--topo", "clusterB", "--src", "0", "--dst", "1", "--bytes", "64MiB", "--json")
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr)
	require.Equal(t, 1, strings.Count(stdout, "\n"), "one JSON document on one line")

	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(stdout), &raw))
	assert.Equal(t, []string{"bytes", "direct_only_us", "paths", "predicted_us"}, sortedKeys(raw))
	var rows []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw["paths"], &rows))
	require.Len(t, rows, 4)
	for _, r := range rows {
		assert.Equal(t, []string{"alpha2_us", "alpha_us", "beta2_GBps", "beta_GBps", "bytes", "chunks", "epsilon_us", "path", "predicted_us", "theta"}, sortedKeys(r))
	}

	var doc splitJSON
	dec := json.NewDecoder(bytes.NewReader([]byte(stdout)))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&doc))
	assert.Equal(t, int64(64<<20), doc.Bytes)
	var names []string
	var sum int64
	var thetaSum float64
	for _, p := range doc.Paths {
		names = append(names, p.Path)
		sum += p.Bytes
		thetaSum += p.Theta
		assert.LessOrEqual(t, p.PredictedUS, doc.PredictedUS*(1+1e-12))
		assert.Positive(t, p.Chunks, p.Path)
	}
	assert.Equal(t, []string{"direct", "gpu:2", "gpu:3", "host"}, names)
	assert.Equal(t, doc.Bytes, sum)
	assert.InDelta(t, 1, thetaSum, 1e-9)
	assert.Less(t, doc.PredictedUS, doc.DirectOnlyUS)
	d := doc.Paths[0]
	assert.Zero(t, d.Alpha2US)
	assert.Zero(t, d.Beta2GBps)
	assert.Zero(t, d.EpsilonUS)
	assert.Equal(t, 1, d.Chunks)
	h := doc.Paths[3]
	assert.Positive(t, h.Beta2GBps)
	assert.Positive(t, h.EpsilonUS)
}

func sortedKeys(m map[string]json.RawMessage) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	sort.Strings(k)
	return k
}

func modelSplitJSON(t *testing.T, args ...string) splitJSON {
	t.Helper()
	stdout, stderr, code := runCLI(t, append([]string{"model", "split", "--json"}, args...)...)
	require.Equal(t, 0, code, stderr)
	var doc splitJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	return doc
}

// --exact agrees with the closed form on a preset; --paths restricts the
// families; below the threshold only the direct path carries bytes.
func TestModelSplitFlags(t *testing.T) {
	closed := modelSplitJSON(t, "--topo", "narval", "--src", "2", "--dst", "0", "--bytes", "256MiB")
	exact := modelSplitJSON(t, "--topo", "narval", "--src", "2", "--dst", "0", "--bytes", "256MiB", "--exact")
	assert.InDelta(t, exact.PredictedUS, closed.PredictedUS, 0.02*exact.PredictedUS)

	direct := modelSplitJSON(t, "--topo", "narval", "--src", "2", "--dst", "0", "--bytes", "256MiB", "--paths", "direct")
	require.Len(t, direct.Paths, 1)
	assert.Equal(t, 1.0, direct.Paths[0].Theta)
	assert.Equal(t, direct.DirectOnlyUS, direct.PredictedUS)

	gpu := modelSplitJSON(t, "--topo", "narval", "--src", "2", "--dst", "0", "--bytes", "256MiB", "--paths", "gpu")
	require.Len(t, gpu.Paths, 2)
	assert.Equal(t, "gpu:1", gpu.Paths[0].Path)
	assert.Equal(t, "gpu:3", gpu.Paths[1].Path)
	assert.Equal(t, closed.DirectOnlyUS, gpu.DirectOnlyUS, "direct_only_us is the pair's direct path even when not selected")

	small := modelSplitJSON(t, "--topo", "h200x2", "--src", "1", "--dst", "0", "--bytes", "4096")
	assert.Equal(t, int64(4096), small.Paths[0].Bytes)
	assert.Zero(t, small.Paths[1].Bytes)
	assert.Zero(t, small.Paths[1].Chunks)
}

func TestModelSplitTable(t *testing.T) {
	stdout, stderr, code := runCLI(t, "model", "split", "--topo", "beluga", "--src", "0", "--dst", "3", "--bytes", "1GiB")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	require.GreaterOrEqual(t, len(lines), 5)
	assert.Contains(t, lines[0], "beluga gpu:0 -> gpu:3")
	assert.Contains(t, stdout, "direct path alone")
	var header int
	for i, l := range lines {
		if strings.Contains(l, "theta") {
			header = i
		}
	}
	require.Positive(t, header)
	assert.Equal(t, []string{"path", "theta", "bytes", "chunks", "start_us", "predicted_us", "alpha_us", "beta_GBps", "alpha2_us", "beta2_GBps", "epsilon_us"}, strings.Fields(lines[header]))
	rows := lines[header+1:]
	require.Len(t, rows, 4)
	first := strings.Fields(rows[0])
	assert.Equal(t, "direct", first[0])
	assert.Len(t, first, 11)
	// Columns line up: every row as wide as the header.
	for _, r := range rows {
		assert.Equal(t, len(lines[header]), len(r))
	}
}

// Bad input: one clear line on stderr, nothing on stdout, non-zero exit.
func TestModelSplitBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--topo", "nosuch", "--src", "0", "--dst", "1", "--bytes", "1M"}, "unknown topology preset"},
		{[]string{"--topo", "clusterB", "--src", "0", "--dst", "4", "--bytes", "1M"}, "--dst 4: out of range"},
		{[]string{"--topo", "clusterB", "--src", "-1", "--dst", "1", "--bytes", "1M"}, "--src -1: out of range"},
		{[]string{"--topo", "clusterB", "--src", "2", "--dst", "2", "--bytes", "1M"}, "both GPU 2"},
		{[]string{"--topo", "clusterB", "--src", "0", "--dst", "1", "--bytes", "0"}, "at least 1 byte"},
		{[]string{"--topo", "clusterB", "--src", "0", "--dst", "1", "--bytes", "lots"}, "--bytes"},
		{[]string{"--topo", "clusterB", "--src", "0", "--dst", "1"}, "--bytes is required"},
		{[]string{"--topo", "clusterB", "--src", "0", "--bytes", "1M"}, "--src and --dst are required"},
		{[]string{"--src", "0", "--dst", "1", "--bytes", "1M"}, "--topo is required"},
		{[]string{"--topo", "clusterB", "--src", "0", "--dst", "1", "--bytes", "1M", "--paths", "direct,nvlink"}, `unknown path family "nvlink"`},
		{[]string{"--topo", "dgx-h100", "--src", "0", "--dst", "1", "--bytes", "1M", "--paths", "gpu"}, "no gpu path"},
		{[]string{"--topo", "clusterA", "--src", "0", "--dst", "2", "--bytes", "1M", "--paths", "host"}, "no host path"},
	}
	for i, c := range cases {
		for _, js := range []bool{false, true} {
			args := append([]string{"model", "split"}, c.args...)
			if js {
				args = append(args, "--json")
			}
			stdout, stderr, code := runCLI(t, args...)
			assert.NotEqual(t, 0, code, "case %d", i)
			assert.Empty(t, stdout, "case %d", i)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "case %d: %q", i, stderr)
			assert.Contains(t, stderr, c.want, "case %d", i)
		}
	}
}

// writeTestFile writes doc into dir/name and returns the path.
func writeTestFile(t *testing.T, dir, name, doc string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(doc), 0o644))
	return p
}

// model split --calibration: the pair's paths are the file's, so the
// direct path alone takes alpha + bytes/beta as measured; a file without
// a GPU direct path, a wrong schema or a missing file is one clear error.
func TestModelSplitCalibration(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string { return writeTestFile(t, dir, name, doc) }
	good := write("good.json", `{"schema":"goring.calibration/v1","host":"h","date":"d","ucx_tls":"sm","paths":[
		{"path":"direct","from":"GPU 0","to":"GPU 1","alpha_us":10,"beta_GBps":100,"samples":[]},
		{"path":"host","from":"GPU 0","to":"GPU 1","alpha_us":20,"beta_GBps":40,"samples":[]}],"skipped":[]}`)
	stdout, stderr, code := runCLI(t, "model", "split", "--topo", "h200x2", "--src", "0", "--dst", "1", "--bytes", "100MB", "--json", "--calibration", good)
	require.Equal(t, 0, code, stderr)
	var got struct {
		DirectOnlyUS float64 `json:"direct_only_us"`
		Paths        []struct {
			Path     string  `json:"path"`
			BetaGBps float64 `json:"beta_GBps"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
	assert.InDelta(t, 10+1e8/(100*1e3), got.DirectOnlyUS, 1e-6, "direct alone: the file's alpha and beta")
	names := map[string]float64{}
	for _, p := range got.Paths {
		names[p.Path] = p.BetaGBps
	}
	assert.Equal(t, map[string]float64{"direct": 100, "host": 40}, names, "only the file's paths")
	for i, c := range []struct{ doc, want string }{
		{`{"schema":"goring.calibration/v1","paths":[{"path":"host","from":"process 0","to":"process 1","alpha_us":3,"beta_GBps":9}],"skipped":["GPU paths: no driver"]}`, "measured no GPU direct path"},
		{`{"schema":"other/v9","paths":[]}`, "schema"},
		{`{"schema":"goring.calibration/v1","paths":[{"path":"direct","from":"GPU 0","alpha_us":1,"beta_GBps":0}]}`, "beta"},
	} {
		f := write(fmt.Sprintf("bad%d.json", i), c.doc)
		_, stderr, code := runCLI(t, "model", "split", "--topo", "h200x2", "--src", "0", "--dst", "1", "--bytes", "1MiB", "--calibration", f)
		assert.NotZero(t, code, "case %d", i)
		assert.Contains(t, stderr, c.want, "case %d", i)
	}
	_, stderr, code = runCLI(t, "model", "split", "--topo", "h200x2", "--src", "0", "--dst", "1", "--bytes", "1MiB", "--calibration", filepath.Join(dir, "none.json"))
	assert.NotZero(t, code)
	assert.Contains(t, stderr, "--calibration")
}

// calibrationFixture is what calibrate writes on the 2xH200 machine
// (calib/testdata: direct 390 GB/s, host-staged 51 GB/s, the together
// samples of docs/gpu.md and their contention fit).
const calibrationFixture = "../../calib/testdata/calibration_h200x2.json"

// badCalibrationFiles writes a file that is not JSON and a JSON document of
// another schema, and returns the cases every --calibration reader must
// refuse with a clear error: those two, a file that is not there, and the
// fixture for a topology of another GPU count.
func badCalibrationFiles(t *testing.T) []struct{ file, topo, want string } {
	t.Helper()
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.json")
	require.NoError(t, os.WriteFile(garbage, []byte("not json"), 0o644))
	topoDoc := filepath.Join(dir, "topo.json")
	require.NoError(t, os.WriteFile(topoDoc, []byte(`{"schema":"goring.topo/v1","name":"x","nodes":[]}`), 0o644))
	missing := filepath.Join(dir, "missing.json")
	return []struct{ file, topo, want string }{
		{missing, "h200x2", "--calibration " + missing + ": open"},
		{garbage, "h200x2", "--calibration " + garbage + ": calibration JSON"},
		{topoDoc, "h200x2", `schema "goring.topo/v1", want "goring.calibration/v1"`},
		{calibrationFixture, "clusterB", "topology clusterB: calibration was measured on a node of 2 GPUs"},
	}
}

// --calibration: the pair's measured figures and contention decide the
// split, which lands where the 2xH200 measurements put the best share
// (6-8% on the host path) instead of the preset's guess.
func TestModelSplitCalibrationFixture(t *testing.T) {
	args := []string{"--topo", "h200x2", "--src", "0", "--dst", "1", "--bytes", "256MiB"}
	preset := modelSplitJSON(t, args...)
	cal := modelSplitJSON(t, append(args, "--calibration", calibrationFixture)...)
	assert.Equal(t, calibrationFixture, cal.Calibration)
	assert.Empty(t, preset.Calibration)
	require.Len(t, cal.Paths, 2)
	assert.InDelta(t, 478.08, preset.Paths[0].BetaGBps, 0.01, "the preset's NVLink line rate")
	assert.InDelta(t, 390, cal.Paths[0].BetaGBps, 1e-6, "the measured peer copy")
	assert.Nil(t, preset.Paths[1].Contention)
	require.NotNil(t, cal.Paths[1].Contention)
	assert.InDelta(t, 0.219, cal.Paths[1].Contention.StagedSlowdown, 1e-9)
	assert.GreaterOrEqual(t, cal.Paths[1].Theta, 0.055)
	assert.LessOrEqual(t, cal.Paths[1].Theta, 0.085)
	assert.Greater(t, cal.DirectOnlyUS, preset.DirectOnlyUS, "measured copies are slower than the line rate")

	stdout, stderr, code := runCLI(t, append([]string{"model", "split"}, append(args, "--calibration", calibrationFixture)...)...)
	require.Zero(t, code, stderr)
	assert.Contains(t, stdout, "# figures measured on h200-example (2025-01-02T03:04:05Z), --calibration "+calibrationFixture)
	assert.Contains(t, stdout, "# while host and direct both run: direct loses 0.0% of its bandwidth, host 21.9% of its own")
}

func TestModelSplitCalibrationBadInput(t *testing.T) {
	cases := badCalibrationFiles(t)
	cases = append(cases, struct{ file, topo, want string }{calibrationFixture, "h200x2", "no figures for GPU 1 -> GPU 0 (the file measured GPU 0 -> GPU 1)"})
	for i, c := range cases {
		src, dst := "0", "1"
		if i == len(cases)-1 {
			src, dst = "1", "0"
		}
		for _, js := range []bool{false, true} {
			args := []string{"model", "split", "--topo", c.topo, "--src", src, "--dst", dst, "--bytes", "64MiB", "--calibration", c.file}
			if js {
				args = append(args, "--json")
			}
			stdout, stderr, code := runCLI(t, args...)
			assert.NotZero(t, code, "case %d", i)
			assert.Empty(t, stdout, "case %d", i)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "case %d: %q", i, stderr)
			assert.Contains(t, stderr, c.want, "case %d", i)
		}
	}
}
