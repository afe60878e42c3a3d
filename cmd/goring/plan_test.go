package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/sched"
)

func TestPlanHumanOutput(t *testing.T) {
	out, errOut, code := runCLI(t, "plan", "allgather", "--alg", "ring", "--topo", "clusterB", "--nodes", "2", "--bytes", "1MiB")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "# goring plan allgather, algorithm ring, topology clusterB (2 nodes, 8 ranks)")
	assert.Contains(t, out, "rank  node  local  steps  sends  sent bytes")
	// Ring allgather: each rank sends P-1 blocks of 1 MiB.
	assert.Regexp(t, `(?m)^\s+7\s+1\s+3\s+15\s+7\s+7340032\s+7340032\s+0$`, out)
	assert.Contains(t, out, "verified allgather/ring: 8 ranks")
	assert.Contains(t, out, "critical path: 7 transfers, 7 inter-node")
}

func TestPlanJSONIsTheProgramOnly(t *testing.T) {
	cases := [][]string{
		{"allreduce", "--alg", "rabenseifner", "--bytes", "4KiB", "--dtype", "float64"},
		{"alltoallv", "--alg", "pairwise", "--bytes", "1000", "--seed", "7"},
		{"alltoallv", "--alg", "pairwise", "--bytes", "4096", "--hot", "3:0.5"},
		{"bcast", "--alg", "knomial", "--bytes", "12", "--root", "5", "--chunks", "3"},
		{"reduce_scatter", "--alg", "ring", "--bytes", "100", "--dtype", "int32"},
	}
	for i, args := range cases {
		full := append([]string{"plan"}, args...)
		full = append(full, "--topo", "clusterB", "--nodes", "2", "--json")
		out, errOut, code := runCLI(t, full...)
		require.Equal(t, 0, code, "case %d: %s", i, errOut)
		plan, err := sched.ParseProgram([]byte(out))
		require.NoError(t, err, "case %d", i)
		_, err = sched.Verify(plan)
		require.NoError(t, err, "case %d", i)
	}
}

func TestPlanAutoSaysWhatItChose(t *testing.T) {
	out, errOut, code := runCLI(t, "plan", "allgather", "--topo", "clusterB", "--bytes", "64")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "# auto: chose ")
}

func TestPlanCountsFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "counts.json")
	require.NoError(t, os.WriteFile(f, []byte(`[[0,8,4,4],[4,0,0,0],[16,4,4,4],[0,0,0,4]]`), 0o644))
	out, errOut, code := runCLI(t, "plan", "alltoallv", "--alg", "pairwise", "--topo", "clusterB", "--counts", f)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "verified alltoallv/pairwise: 4 ranks")
}

func TestPlanSVG(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plan.svg")
	out, errOut, code := runCLI(t, "plan", "allreduce", "--alg", "ring", "--topo", "clusterB", "--nodes", "4", "--bytes", "64KiB", "--svg", file)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "timeline written to "+file)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	svg := string(data)
	assert.True(t, strings.HasPrefix(svg, "<svg "), svg[:40])
	assert.True(t, strings.HasSuffix(svg, "</svg>\n"))
	for _, want := range []string{">rank 0<", ">rank 15<", "allreduce / ring on clusterB: 16 ranks", `fill="#e15759"`, "inter-node transfer", "rank 3 step 0: send src"} {
		assert.Contains(t, svg, want)
	}
	// One box per step: 16 ranks x (15 rounds x (send, recv, reduce) + 15
	// rounds x (send, recv)); ring allreduce starts without a copy.
	assert.Equal(t, 16*(15*3+15*2), strings.Count(svg, "<title>rank "))
}

func TestPlanBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"plan", "gather", "--topo", "clusterB", "--bytes", "4"}, `unknown collective "gather"`},
		{[]string{"plan", "allgather", "--alg", "tree", "--topo", "clusterB", "--bytes", "4"}, `unknown allgather algorithm "tree"`},
		{[]string{"plan", "allgather", "--topo", "clusterB"}, "--bytes is required"},
		{[]string{"plan", "allgather", "--topo", "clusterB", "--bytes", "6"}, "6 bytes is not a whole number of 4-byte elements"},
		{[]string{"plan", "allgather", "--topo", "clusterB", "--bytes", "4x"}, "--bytes"},
		{[]string{"plan", "allgather", "--bytes", "4"}, "--topo is required"},
		{[]string{"plan", "allgather", "--topo", "nosuch", "--bytes", "4"}, `unknown topology preset "nosuch"`},
		{[]string{"plan", "allgather", "--topo", "clusterB", "--bytes", "4", "--json", "--svg", "x.svg"}, "--json and --svg exclude each other"},
		{[]string{"plan", "allgather", "--topo", "clusterB", "--bytes", "4", "--root", "1"}, "--root applies to bcast only"},
		{[]string{"plan", "bcast", "--topo", "clusterB", "--bytes", "4", "--root", "9"}, "root 9 out of range 0..3"},
		{[]string{"plan", "allgather", "--topo", "clusterB", "--bytes", "4", "--seed", "3"}, "apply to alltoallv only"},
		{[]string{"plan", "alltoallv", "--topo", "clusterB", "--bytes", "4", "--hot", "x"}, `--hot "x": want RANK:FRACTION`},
		{[]string{"plan", "alltoallv", "--topo", "clusterB", "--bytes", "4", "--hot", "0:0.5", "--seed", "2"}, "exclude each other"},
		{[]string{"plan", "allgather", "--alg", "neighbor", "--topo", "clusterB", "--nodes", "1", "--bytes", "4", "--dtype", "int8"}, ""},
		{[]string{"plan", "allgather", "--alg", "recursive_doubling", "--topo", "h200x2", "--nodes", "3", "--bytes", "4"}, "algorithm recursive_doubling: recursive doubling needs a power-of-two number of ranks, have 6"},
		{[]string{"plan", "allgather", "--topo", "clusterB", "--bytes", "4", "--dtype", "float7"}, `unknown dtype "float7"`},
		{[]string{"plan", "allgather", "--topo", "clusterB", "--bytes", "4", "--nodes", "0"}, "--nodes 0"},
		{[]string{"plan", "allgather", "--topo", "clusterB", "--bytes", "4", "--chunks", "-2"}, "--chunks -2"},
		{[]string{"plan", "alltoallv", "--topo", "clusterB", "--counts", "/nonexistent/c.json"}, "--counts"},
		{[]string{"plan"}, "accepts 1 arg"},
	}
	for i, c := range cases {
		out, errOut, code := runCLI(t, c.args...)
		if c.want == "" { // a valid neighbour-exchange case in the middle: must succeed
			assert.Equal(t, 0, code, "case %d: %s", i, errOut)
			continue
		}
		assert.NotEqual(t, 0, code, "case %d", i)
		assert.Empty(t, out, "case %d: nothing on stdout", i)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "case %d: one line: %q", i, errOut)
		assert.True(t, strings.HasPrefix(errOut, "goring: "), "case %d: %q", i, errOut)
		assert.Contains(t, errOut, c.want, "case %d", i)
	}
}
