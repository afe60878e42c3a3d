package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/moe"
	"github.com/goring-hpc/goring/sched"
	"github.com/goring-hpc/goring/sweep"
)

func TestPlanDispatchPrintsRoutingAndPlanner(t *testing.T) {
	out, errOut, code := runCLI(t, "plan", "dispatch", "--alg", "nimble", "--topo", "clusterB", "--nodes", "2",
		"--tokens", "64", "--hidden-bytes", "8KiB", "--topk", "4", "--experts", "16", "--hot", "0:0.7")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "verified dispatch/nimble: 8 ranks")
	assert.Contains(t, out, "# routing: 512 tokens of 8192 bytes, top-4 of 16 experts, 2048 expert rows")
	assert.Regexp(t, `# planner: [0-9.]+ us for 8 ranks \(best of 20; [0-9.]+ us building`, out)
}

func TestPlanCombineJSONRoundTrips(t *testing.T) {
	out, errOut, code := runCLI(t, "plan", "combine", "--alg", "multiwrite", "--topo", "clusterB", "--nodes", "2",
		"--tokens", "5", "--hidden-bytes", "6", "--topk", "3", "--experts", "8", "--dtype", "bfloat16", "--placement", "round_robin", "--json")
	require.Equal(t, 0, code, errOut)
	plan, err := sched.ParseProgram([]byte(out))
	require.NoError(t, err)
	require.NotNil(t, plan.Routing)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, plan.Routing.Placement)
	_, err = sched.Verify(plan)
	require.NoError(t, err)
}

func TestSimDispatchTable(t *testing.T) {
	out, errOut, code := runCLI(t, "sim", "dispatch", "--topo", "clusterB", "--nodes", "2",
		"--tokens", "8,32", "--hidden-bytes", "7168", "--topk", "8", "--experts", "32", "--json")
	require.Equal(t, 0, code, errOut)
	var doc sweep.MoEDoc
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.Len(t, doc.Results, 6)
	inter := map[string]int64{}
	for _, r := range doc.Results {
		require.NotNil(t, r.PredictedUS, r.Algorithm)
		require.Positive(t, *r.PredictedUS)
		if r.TokensPerRank == 32 {
			inter[r.Algorithm] = r.InterNodeBytes
		}
	}
	assert.Less(t, inter["multiwrite"], inter["unicast"], "the relay crosses once per node")
}

func TestMoEFlagErrors(t *testing.T) {
	base := []string{"--topo", "clusterB", "--nodes", "2"}
	full := []string{"--tokens", "4", "--hidden-bytes", "64", "--topk", "2", "--experts", "8"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"plan", "allgather", "--bytes", "1KiB", "--tokens", "4"}, "--tokens apply to dispatch and combine only"},
		{append([]string{"plan", "dispatch", "--bytes", "1KiB"}, full...), "takes --hidden-bytes"},
		{[]string{"plan", "dispatch", "--tokens", "4"}, "need --hidden-bytes, --topk and --experts"},
		{[]string{"plan", "dispatch", "--hidden-bytes", "64", "--topk", "2", "--experts", "8"}, "--tokens is required"},
		{append([]string{"plan", "dispatch", "--hot", "0:1.5"}, full...), "--hot"},
		{append([]string{"plan", "dispatch", "--hot", "9:0.5"}, full...), "hot expert 9 out of range"},
		{append([]string{"plan", "dispatch", "--placement", "0,1"}, full...), "2 ranks listed for 8 experts"},
		{[]string{"plan", "dispatch", "--tokens", "4", "--hidden-bytes", "64", "--topk", "9", "--experts", "8"}, "want 1 <= topk <= experts"},
		{append([]string{"plan", "combine", "--dtype", "int32"}, full...), "combine sums bfloat16 or float32"},
		{[]string{"plan", "combine", "--tokens", "4", "--hidden-bytes", "63", "--topk", "2", "--experts", "8"}, "not a whole number of 4-byte elements"},
		{append([]string{"plan", "dispatch", "--counts", "x.json"}, full...), "--counts applies to alltoallv only"},
		{append([]string{"sim", "dispatch", "--tokens", "4,x"}, full[2:]...), "is not a token count"},
		{append([]string{"plan", "dispatch", "--alg", "ring"}, full...), "unknown dispatch algorithm"},
		// Each of these hung or ran out of memory instead of an error.
		{[]string{"sim", "dispatch", "--tokens", "4", "--hidden-bytes", "64", "--topk", "2", "--experts", "2", "--hot", "0:0.5"}, "hot experts leave 1 others"},
		{[]string{"bench", "dispatch", "--np", "8", "--tokens", "4", "--hidden-bytes", "64", "--topk", "2", "--experts", "2", "--hot", "0:0.5"}, "hot experts leave 1 others"},
		{[]string{"sim", "dispatch", "--tokens", "100000000000", "--hidden-bytes", "64", "--topk", "2", "--experts", "8"}, "slots (tokens x top-k) pass"},
		{[]string{"sim", "dispatch", "--tokens", "4", "--hidden-bytes", "64", "--topk", "2", "--experts", "3000000000"}, "--experts 3000000000: at most"},
	}
	for _, c := range cases {
		args := append(append([]string{}, c.args...), base...)
		_, errOut, code := runCLI(t, args...)
		assert.NotEqual(t, 0, code, "%v", c.args)
		assert.Contains(t, errOut, c.want, "%v", c.args)
	}
}

// goring bench runs dispatch and combine on real processes over UCX,
// validated every iteration, one row per algorithm and token count.
func TestBenchDispatchCombineValidated(t *testing.T) {
	needUCX(t)
	for _, c := range []string{"dispatch", "combine"} {
		rows := benchJSON(t, c, "--alg", "all", "--np", "4", "--nodes", "2", "--tokens", "3,17", "--hidden-bytes", "36",
			"--topk", "3", "--experts", "6", "--hot", "1:0.6", "--iters", "2", "--warmup", "1", "--validate")
		seen := map[string]int{}
		for _, r := range rows {
			assert.Equal(t, c, r.Collective)
			assert.True(t, r.Validated)
			assert.Contains(t, []int64{3, 17}, r.Bytes, "rows carry tokens per rank")
			seen[r.Algorithm]++
		}
		assert.Equal(t, map[string]int{"unicast": 2, "multiwrite": 2, "nimble": 2}, seen, c)
	}
	_, errOut, code := runCLI(t, "bench", "dispatch", "--np", "2", "--bytes", "1KiB", "--tokens", "2", "--hidden-bytes", "8", "--topk", "1", "--experts", "2")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "not --bytes")
}

// --routing-out writes the routing the plan used (the device script's NCCL
// baseline reads it for the same counts).
func TestPlanRoutingOut(t *testing.T) {
	f := t.TempDir() + "/r.json"
	out, errOut, code := runCLI(t, "plan", "dispatch", "--alg", "unicast", "--topo", "clusterB", "--tokens", "6", "--hidden-bytes", "10",
		"--topk", "2", "--experts", "5", "--hot", "4:0.9", "--seed", "3", "--json", "--routing-out", f)
	require.Equal(t, 0, code, errOut)
	plan, err := sched.ParseProgram([]byte(out))
	require.NoError(t, err)
	data, err := os.ReadFile(f)
	require.NoError(t, err)
	var r moe.Routing
	require.NoError(t, json.Unmarshal(data, &r))
	assert.Equal(t, plan.Routing, &r)
}
