package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every JSON file the CLI reads is one document: a valid one followed by
// anything else, a closing bracket included (an edit gone wrong, two
// files run together), is refused in one line naming the trailing data,
// not read as the document before it.
func TestJSONInputsRefuseTrailingData(t *testing.T) {
	dir := t.TempDir()
	topoDoc, stderr, code := runCLI(t, "topo", "show", "--topo", "h200x2", "--json")
	require.Equal(t, 0, code, stderr)
	cal, err := os.ReadFile(calibrationFixture)
	require.NoError(t, err)
	claims := `{"format":"goring.claims/v1","gpu":"NVIDIA H200","ranks":2,"rows":{"allreduce":[{"bytes":4,"goring_us":1,"peers_us":{"nccl":2}}]}}`
	docs := []struct {
		name, doc string
		args      func(file string) []string
	}{
		{"topo", topoDoc, func(f string) []string { return []string{"topo", "show", "--topo", f} }},
		{"calibration", string(cal), func(f string) []string {
			return []string{"sim", "allgather", "--alg", "ring", "--topo", "h200x2", "--bytes", "1MiB", "--calibration", f}
		}},
		{"counts", `[[0,8],[8,0]]`, func(f string) []string {
			return []string{"plan", "alltoallv", "--alg", "pairwise", "--topo", "h200x2", "--bytes", "4", "--counts", f}
		}},
		{"claims", claims, func(f string) []string { return []string{"tune", "show", f} }},
	}
	for _, d := range docs {
		good := filepath.Join(dir, d.name+".json")
		require.NoError(t, os.WriteFile(good, []byte(d.doc), 0o644))
		_, stderr, code := runCLI(t, d.args(good)...)
		require.Equal(t, 0, code, "%s: the document alone: %s", d.name, stderr)
		for i, tail := range []string{"}", "]", "x", `{"more":1}`} {
			bad := filepath.Join(dir, d.name+"-bad.json")
			require.NoError(t, os.WriteFile(bad, []byte(strings.TrimSpace(d.doc)+"\n"+tail+"\n"), 0o644))
			stdout, stderr, code := runCLI(t, d.args(bad)...)
			assert.Equal(t, 1, code, "%s + %q", d.name, tail)
			assert.Empty(t, stdout, "%s + %q", d.name, tail)
			assert.Contains(t, stderr, "trailing data", "%s + %q (case %d)", d.name, tail, i)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "%s + %q: one line: %q", d.name, tail, stderr)
		}
	}
}
