package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/topo"
)

// docs/contracts.md: "goring topo show --topo clusterA --nodes 4 --json >
// t.json; goring topo show --topo t.json --json" gives the same document.
func TestTopoShowJSONReadsBackByteIdentical(t *testing.T) {
	out, stderr, code := runCLI(t, "topo", "show", "--topo", "clusterA", "--nodes", "4", "--json")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
	file := filepath.Join(t.TempDir(), "t.json")
	require.NoError(t, os.WriteFile(file, []byte(out), 0o644))
	again, stderr, code := runCLI(t, "topo", "show", "--topo", file, "--json")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, out, again)

	// Exactly one document, and the one asked for.
	tp, err := topo.Parse([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, 4, tp.NumNodes())
	assert.Equal(t, 16, tp.NumGPUs())
	assert.Equal(t, "clusterA", tp.Name)
}

func TestTopoShowTables(t *testing.T) {
	for i, name := range topo.PresetNames() {
		out, stderr, code := runCLI(t, "topo", "show", "--topo", name, "--nodes", "2")
		require.Equal(t, 0, code, "case %d: %s", i, stderr)
		tp, err := topo.Preset(name)
		require.NoError(t, err)
		lines := strings.Split(out, "\n")
		require.True(t, strings.HasPrefix(lines[0], "# topology "+name+": 2 node(s)"), "case %d: %q", i, lines[0])
		// Identical nodes share one GPU table and one link table.
		assert.Equal(t, 1, strings.Count(out, "# GPUs of nodes 0-1"), "case %d", i)
		// One row per GPU and per link, with the link's figures.
		n := tp.Nodes[0]
		for _, l := range n.Links {
			fields := []string{string(l.Kind), l.A, l.B}
			found := false
			for _, ln := range lines {
				f := strings.Fields(ln)
				if len(f) == 8 && f[0] == fields[0] && f[1] == fields[1] && f[2] == fields[2] {
					found = true
				}
			}
			assert.True(t, found, "case %d: no row for link %s %s-%s", i, l.Kind, l.A, l.B)
		}
		// Columns line up: every row of the link table starts its "a"
		// column where the header's does.
		hdr := -1
		for j, ln := range lines {
			if strings.HasPrefix(ln, "kind ") {
				hdr = j
				break
			}
		}
		require.GreaterOrEqual(t, hdr, 0, "case %d", i)
		col := strings.Index(lines[hdr], "a ")
		for _, ln := range lines[hdr+1 : hdr+1+len(n.Links)] {
			assert.NotEqual(t, ' ', rune(ln[col]), "case %d: row %q", i, ln)
			assert.Equal(t, ' ', rune(ln[col-1]), "case %d: row %q", i, ln)
		}
		// How many processes share each GPU, only where some do.
		assert.Equal(t, n.GPUs[0].Share > 1, strings.Contains(out, "shared_by"), "case %d", i)
	}
	out, _, code := runCLI(t, "topo", "show", "--topo", "h100-shared4")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "0    H100   0       0     -     -           4\n")
}

func TestTopoShowBadInput(t *testing.T) {
	dir := t.TempDir()
	badJSON := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(badJSON, []byte(`{"schema":"goring.topo/v1","nodes":[`), 0o644))
	badGPU := filepath.Join(dir, "gpu.json")
	doc, _, _ := runCLI(t, "topo", "show", "--topo", "clusterB", "--json")
	require.NoError(t, os.WriteFile(badGPU, []byte(strings.Replace(doc, `"b": "gpu:1"`, `"b": "gpu:7"`, 1)), 0o644))
	tests := []struct {
		args []string
		want string
	}{
		/*0*/ {[]string{"--topo", "nosuch"}, `unknown topology preset "nosuch"`},
		/*1*/ {[]string{"--topo", badJSON}, `topology JSON: unexpected EOF`},
		/*2*/ {[]string{"--topo", filepath.Join(dir, "missing.json")}, `no such file or directory`},
		/*3*/ {[]string{"--topo", "clusterA", "--nodes", "0"}, `--nodes 0: want at least 1`},
		/*4*/ {[]string{"--topo", "clusterA", "--nodes", "-3"}, `--nodes -3: want at least 1`},
		/*5*/ {[]string{}, `--topo is required`},
		/*6*/ {[]string{"--topo", badGPU, "--json"}, `GPU 7 out of range (0..3)`},
		/*7*/ {[]string{"--topo", "clusterA", "--nodes", "two"}, `invalid argument "two"`},
		/*8*/ {[]string{"--topo", "clusterA", "extra"}, `unknown command "extra"`},
	}
	for i, tt := range tests {
		out, stderr, code := runCLI(t, append([]string{"topo", "show"}, tt.args...)...)
		assert.NotEqual(t, 0, code, "case %d", i)
		assert.Empty(t, out, "case %d: nothing on stdout", i)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "case %d: one line, got %q", i, stderr)
		assert.True(t, strings.HasPrefix(stderr, "goring: "), "case %d: %q", i, stderr)
		assert.Contains(t, stderr, tt.want, "case %d", i)
	}
}

func TestTopoDetect(t *testing.T) {
	// This machine: with no NVIDIA driver, one line and exit status 3.
	out, stderr, code := runCLI(t, "topo", "detect", "--json")
	if code == 0 {
		t.Logf("an NVIDIA driver is present; the detected topology is checked instead")
		_, err := topo.Parse([]byte(out))
		require.NoError(t, err)
	} else {
		assert.Equal(t, 3, code, stderr)
		assert.Empty(t, out)
		assert.Regexp(t, `^goring: no NVIDIA driver found \(.+\)\n$`, stderr)
	}

	// With a discovery that succeeds (faked), the command prints what it
	// found, as a table or as one document.
	defer func(f func() (*topo.Topology, error)) { detectTopo = f }(detectTopo)
	detectTopo = func() (*topo.Topology, error) { return topo.Preset("h200x2") }
	out, stderr, code = runCLI(t, "topo", "detect", "--json")
	require.Equal(t, 0, code, stderr)
	tp, err := topo.Parse([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, "h200x2", tp.Name)
	out, _, code = runCLI(t, "topo", "detect")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "# topology h200x2: 1 node(s), 2 GPU(s), 0 rail(s)")

	// Any other failure: one line, status 1.
	detectTopo = func() (*topo.Topology, error) { return nil, assert.AnError }
	out, stderr, code = runCLI(t, "topo", "detect")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, "goring: topo detect: "+assert.AnError.Error()+"\n", stderr)
}
