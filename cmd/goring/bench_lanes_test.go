package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lanes over real UCX processes: each rank opens a UCX context and worker
// per lane, and every iteration's output is checked, on 1, 2, 3, 4 and 8
// lanes at sizes whose lane parts are unequal.
func TestBenchLanesValidateOverUCX(t *testing.T) {
	needUCX(t)
	jobs := []struct {
		coll, alg string
		bytes     string
		extra     []string
	}{
		{"allgather", "ring", "1,7,1001,65537", nil},
		{"allgather", "recursive_doubling", "7,1001", nil},
		{"allgather", "bruck", "1001", nil},
		{"reduce_scatter", "ring", "4,1004,65540", []string{"--dtype", "int32", "--op", "max"}},
		{"reduce_scatter", "parallel_rings", "1004", []string{"--dtype", "int32"}},
		{"allreduce", "ring", "12,4004,262148", []string{"--dtype", "float32"}},
		{"allreduce", "lane", "4004,65540", []string{"--dtype", "float32"}},
		{"allreduce", "rabenseifner", "4004", []string{"--dtype", "int64", "--bytes", "8008"}},
	}
	if testing.Short() {
		jobs = jobs[5:6]
	}
	for _, j := range jobs {
		args := append([]string{j.coll, "--alg", j.alg, "--np", "4", "--nodes", "2", "--bytes", j.bytes, "--lanes", "1,2,3,4,8",
			"--iters", "3", "--warmup", "1", "--validate"}, j.extra...)
		rows := benchJSON(t, args...)
		seen := map[int]int{}
		for _, r := range rows {
			assert.True(t, r.Validated, "%s/%s", j.coll, j.alg)
			seen[r.Lanes]++
		}
		sizes := len(strings.Split(j.bytes, ","))
		if j.alg == "rabenseifner" {
			sizes = 1
		}
		for _, w := range []int{1, 2, 3, 4, 8} {
			assert.Equal(t, sizes, seen[w], "%s/%s on %d lanes: one row per size", j.coll, j.alg, w)
		}
	}
}

// --lanes 1 (the default) is the run of before lanes: no lanes field in
// the JSON, no lanes column in the CSV, no lanes in the table.
func TestBenchOneLaneUnchanged(t *testing.T) {
	needUCX(t)
	stdout, stderr, code := runCLI(t, "bench", "allgather", "--alg", "ring", "--np", "2", "--bytes", "64", "--iters", "2", "--warmup", "0", "--lanes", "1", "--json")
	require.Zero(t, code, stderr)
	assert.NotContains(t, stdout, "lanes")
	var doc map[string][]map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	stdout, stderr, code = runCLI(t, "bench", "allgather", "--alg", "ring", "--np", "2", "--bytes", "64", "--iters", "2", "--warmup", "0", "--csv")
	require.Zero(t, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, "collective,algorithm,bytes,avg_us,min_us,max_us,iterations,busbw_GBps,validated\n"), stdout)
	stdout, stderr, code = runCLI(t, "bench", "allgather", "--alg", "ring", "--np", "2", "--bytes", "64", "--iters", "2", "--warmup", "0", "--lanes", "2")
	require.Zero(t, code, stderr)
	assert.Contains(t, stdout, "lanes 2")
}

func TestBenchLanesBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"bench", "allreduce", "--np", "2", "--bytes", "4", "--lanes", "0"}, "--lanes: lanes 0: want 1 to 64"},
		{[]string{"bench", "allreduce", "--np", "2", "--bytes", "4", "--lanes", "1,x"}, "--lanes \"1,x\": want a count"},
		{[]string{"bench", "allreduce", "--np", "2", "--bytes", "4", "--lanes", "65"}, "want 1 to 64"},
		{[]string{"bench", "alltoallv", "--np", "2", "--lanes", "2"}, "alltoallv runs on one lane"},
		{[]string{"bench", "allgather", "--np", "2", "--lanes", "2", "--mem", "cuda"}, "lanes run on host memory only"},
	}
	for i, c := range cases {
		stdout, stderr, code := runCLI(t, c.args...)
		assert.NotZero(t, code, "case %d", i)
		assert.Empty(t, stdout, "case %d", i)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "case %d: one line: %q", i, stderr)
		assert.Contains(t, stderr, c.want, "case %d", i)
	}
}
