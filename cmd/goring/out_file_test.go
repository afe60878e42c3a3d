package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// An output file in a missing folder, or a folder given as the file, is
// refused in one line naming the flag before anything runs: no rank
// starts, no table is printed, no measurement is lost at the end.
func TestOutFilesCheckedBeforeRunning(t *testing.T) {
	dir, log := fakeTools(t)
	missing := filepath.Join(t.TempDir(), "none", "out")
	folder := t.TempDir()
	tune := []string{"tune", "ucc", "--np", "2", "--launcher", filepath.Join(dir, "mpirun"),
		"--perftest", filepath.Join(dir, "ucc_perftest"), "--min", "16K", "--max", "16K", "--gpu", "NVIDIA H200", "--shared", "no"}
	for _, path := range []string{missing, folder} {
		for i, c := range []struct {
			args []string
			flag string
		}{
			{[]string{"bench", "allgather", "--np", "2", "--alg", "ring", "--bytes", "4", "--iters", "1", "--png", path}, "--png"},
			{[]string{"bench", "p2p", "--mem", "cuda", "--bytes", "4:8", "--png", path}, "--png"},
			{[]string{"calibrate", "--bytes", "4:8", "--iters", "1", "--out", path}, "--out"},
			{append(append([]string{}, tune...), "--out", path), "--out"},
			{[]string{"sim", "allgather", "--alg", "all", "--topo", "clusterB", "--bytes", "4:64", "--png", path}, "--png"},
		} {
			stdout, stderr, code := runCLI(t, c.args...)
			assert.Equal(t, 1, code, "case %d %s: %s", i, path, stderr)
			assert.Empty(t, stdout, "case %d %s", i, path)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "case %d %s: one line: %q", i, path, stderr)
			assert.Contains(t, stderr, "goring: "+c.flag+" "+path+": ", "case %d", i)
		}
	}
	assert.NoFileExists(t, log, "tune ucc launched nothing")
}
