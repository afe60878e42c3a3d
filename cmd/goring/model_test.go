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

// model split --calibration: the pair's paths are the file's, so the
// direct path alone takes alpha + bytes/beta as measured; a file without
// a GPU direct path, a wrong schema or a missing file is one clear error.
func TestModelSplitCalibration(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(doc), 0o644))
		return p
	}
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
