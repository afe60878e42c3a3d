package tune

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// claimsDoc is a claims file of 4 ranks on A100s: goring beats tl/nccl
// in allreduce at 64 KiB only, tl/cuda in allgather at both sizes, and
// tl/ucp (the only peer timed) in reduce_scatter at 1 MiB only.
const claimsDoc = `{
  "format": "goring.claims/v1", "gpu": "NVIDIA A100-SXM4-80GB", "ranks": 4, "shared": false,
  "measured": "2026-11-29T04:00:00Z", "command": "goring tune ucc --np 4",
  "rows": {
    "allreduce": [
      {"bytes": 16384, "goring_us": 30, "peers_us": {"nccl": 20}},
      {"bytes": 65536, "goring_us": 18, "peers_us": {"nccl": 25}}
    ],
    "allgather": [
      {"bytes": 16384, "goring_us": 20, "peers_us": {"nccl": 15, "cuda": 40}},
      {"bytes": 1048576, "goring_us": 50, "peers_us": {"nccl": 45, "cuda": 90}}
    ],
    "reduce_scatter": [
      {"bytes": 65536, "goring_us": 100, "peers_us": {"ucp": 99}},
      {"bytes": 1048576, "goring_us": 100, "peers_us": {"ucp": 300}}
    ]
  }
}`

// A machine's own claims file decides on the teams it fits, against the
// layer UCC would otherwise run there (tl/cuda's allgather even where
// tl/nccl was faster; tl/ucp's time where the file has no GPU layer),
// and leaves every other team to the shipped tables.
func TestClaimsFileDecides(t *testing.T) {
	f, err := ParseClaims([]byte(claimsDoc))
	require.NoError(t, err)
	layers := []string{"ucp", "cuda", "nccl", "goring"}
	got := NodeClaims("NVIDIA A100-SXM4-80GB", 4, false, layers, f)
	// allgather: both sizes beat tl/cuda, up to twice the last row (4
	// ranks' blocks of 2 MiB); allreduce: 64 KiB up to 128 KiB;
	// reduce_scatter: 1 MiB up to 2 MiB (UCC's range of it is the block
	// a rank receives).
	assert.Equal(t, "allgather:cuda:0-8388607:41#allreduce:cuda:65536-131071:41#reduce_scatter:cuda:1048576-2097151:41", got)
	assert.Empty(t, NodeClaims("NVIDIA A100-SXM4-80GB", 2, false, layers, f), "another team size: no table")
	assert.Empty(t, NodeClaims("NVIDIA A100-SXM4-80GB", 4, true, layers, f), "ranks sharing a GPU: no table")
	// A file of another machine leaves the shipped table in charge.
	assert.Equal(t, NodeClaims("NVIDIA H100 80GB HBM3", 4, false, layers, nil), NodeClaims("NVIDIA H100 80GB HBM3", 4, false, layers, f))
	// A file of a shipped machine replaces its table.
	f.GPU = "NVIDIA H100"
	assert.Equal(t, got, NodeClaims("NVIDIA H100 80GB HBM3", 4, false, layers, f))

	str, summary, ok := WithNodeClaims("model", "model's", "NVIDIA H100 80GB HBM3", 4, false, layers, f, "my.json")
	assert.True(t, ok)
	assert.Equal(t, "model|"+got, str)
	assert.Contains(t, summary, "measured on this machine (my.json)")
	_, summary, _ = WithNodeClaims("model", "model's", "NVIDIA H100 80GB HBM3", 4, false, layers, nil, "")
	assert.Contains(t, summary, "measured on NVIDIA H100 80GB HBM3:")
}

// ParseClaims refuses what it cannot trust, each with the reason.
func TestParseClaimsRefuses(t *testing.T) {
	base := func() map[string]any {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(claimsDoc), &m))
		return m
	}
	rows := func(m map[string]any) []any { return m["rows"].(map[string]any)["allreduce"].([]any) }
	cases := map[string]struct {
		edit func(m map[string]any)
		want string
	}{
		"format":        {func(m map[string]any) { m["format"] = "goring.claims/v0" }, "format"},
		"gpu":           {func(m map[string]any) { m["gpu"] = " " }, "no gpu"},
		"ranks":         {func(m map[string]any) { m["ranks"] = 1 }, "ranks 1"},
		"no rows":       {func(m map[string]any) { m["rows"] = map[string]any{} }, "no rows"},
		"collective":    {func(m map[string]any) { m["rows"].(map[string]any)["alltoall"] = []any{} }, `rows of "alltoall"`},
		"order":         {func(m map[string]any) { rows(m)[1].(map[string]any)["bytes"] = 16384 }, "sizes must increase"},
		"bytes":         {func(m map[string]any) { rows(m)[0].(map[string]any)["bytes"] = 0 }, "0 bytes"},
		"goring time":   {func(m map[string]any) { rows(m)[0].(map[string]any)["goring_us"] = 0 }, "goring's time"},
		"peer name":     {func(m map[string]any) { rows(m)[0].(map[string]any)["peers_us"] = map[string]any{"mpi": 3} }, `layer "mpi"`},
		"peer time":     {func(m map[string]any) { rows(m)[0].(map[string]any)["peers_us"] = map[string]any{"nccl": -1} }, "nccl's time"},
		"unknown field": {func(m map[string]any) { m["speed"] = "fast" }, "unknown field"},
		// Beyond what any call holds, and what the claims' ends (twice the
		// last row, times the ranks for allgather) could no longer count:
		// 2^62 bytes made a claim to "inf" or none at all.
		"huge bytes": {func(m map[string]any) { rows(m)[1].(map[string]any)["bytes"] = int64(1) << 62 }, "bytes: want at most"},
		"huge team":  {func(m map[string]any) { m["ranks"] = 1 << 30 }, "ranks 1073741824"},
	}
	for name, c := range cases {
		m := base()
		c.edit(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		_, err = ParseClaims(b)
		assert.ErrorContains(t, err, c.want, name)
	}
	_, err := ParseClaims([]byte("{"))
	assert.ErrorContains(t, err, "not a goring.claims/v1 document")
}
