package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goring model scores prints what the team layer claims: on four
// processes sharing one GPU, every CUDA allgather; on host memory nothing.
func TestModelScores(t *testing.T) {
	out, stderr, code := runCLI(t, "model", "scores", "--np", "4", "--gpus", "1")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "# cuda allgather (bytes per rank)")
	assert.Contains(t, out, "score string: allgather:cuda:0-inf:11#")
	assert.NotContains(t, out, ":host:")

	out, stderr, code = runCLI(t, "model", "scores", "--np", "2", "--json")
	require.Equal(t, 0, code, stderr)
	var doc struct {
		Scores  string `json:"scores"`
		Summary string `json:"summary"`
		Points  map[string][]struct {
			Bytes     int64   `json:"bytes"`
			GoringAlg string  `json:"goring_alg"`
			GoringUS  float64 `json:"goring_us"`
			UCPAlg    string  `json:"ucp_alg"`
			Claimed   bool    `json:"claimed"`
		} `json:"points"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Empty(t, doc.Scores)
	assert.Contains(t, doc.Summary, "claims nothing")
	ar := doc.Points["host/allreduce"]
	require.NotEmpty(t, ar)
	assert.Equal(t, "recursive_doubling", ar[0].GoringAlg)
	assert.Equal(t, "rabenseifner", ar[len(ar)-1].UCPAlg)
	assert.Positive(t, ar[0].GoringUS)

	out, stderr, code = runCLI(t, "model", "scores", "--np", "2", "--gpus", "2", "--calibration", "../../calib/testdata/calibration_h100x2_engine.json")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "on the links of")

	// Lanes for the host (UCC_TL_GORING_LANES=auto on 2 ranks of a
	// 16-core host): the host sizes that take lanes are claimed, in UCC's
	// count (an allgather's whole result).
	out, stderr, code = runCLI(t, "model", "scores", "--np", "2", "--lanes", "4")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "score string: allgather:host:4194304-inf:11#allreduce:host:2097152-inf:11")
	assert.Contains(t, out, "rabenseifner/L4")

	// Cross-memory reads (UCC_TL_GORING_CROSSMEM=auto, 4 threads a rank):
	// the measured sizes are claimed, marked as measured.
	out, stderr, code = runCLI(t, "model", "scores", "--np", "4", "--crossmem", "4")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "score string: allgather:host:16777216-inf:11#allreduce:host:1048576-inf:11")
	assert.Regexp(t, `1MiB +crossmem/T4 +measured`, out)
	out, stderr, code = runCLI(t, "model", "scores", "--np", "2", "--crossmem", "4", "--json")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, `"measured": true`)
	// One thread a rank: the 2-rank allgather from 2 MiB per rank only.
	out, stderr, code = runCLI(t, "model", "scores", "--np", "2", "--crossmem", "1")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "score string: allgather:host:4194304-inf:11\n")
	// Six ranks of 2 threads (16 cores): allgather from 4 MiB per rank (a
	// 24 MiB result), allreduce from 2 MiB; seven ranks were not measured.
	out, stderr, code = runCLI(t, "model", "scores", "--np", "6", "--crossmem", "2")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "score string: allgather:host:25165824-inf:11#allreduce:host:2097152-inf:11\n")
	out, stderr, code = runCLI(t, "model", "scores", "--np", "7", "--crossmem", "2")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "score string: (none)\n")
}

func TestModelScoresBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--np", "1"}, "want 2 to 16"},
		{[]string{"--np", "17"}, "want 2 to 16"},
		{[]string{"--np", "4", "--gpus", "2"}, "share one GPU"},
		{[]string{"--np", "4", "--gpus", "-1"}, "--gpus -1"},
		{[]string{"--np", "2", "--cpath-max", "x"}, "--cpath-max"},
		{[]string{"--np", "2", "--lanes", "0"}, "--lanes 0: want 1 to 64"},
		{[]string{"--np", "2", "--lanes", "65"}, "--lanes 65"},
		{[]string{"--np", "2", "--crossmem", "5"}, "--crossmem 5: want 0 (off) to 4"},
		{[]string{"--np", "2", "--crossmem", "-1"}, "--crossmem -1"},
		{[]string{"--np", "2", "--calibration", "x.json"}, "needs --gpus"},
		{[]string{"--np", "2", "--gpus", "2", "--calibration", "/nonexistent.json"}, "nonexistent"},
	} {
		_, stderr, code := runCLI(t, append([]string{"model", "scores"}, c.args...)...)
		assert.NotEqual(t, 0, code, "%v", c.args)
		assert.Contains(t, stderr, c.want, "%v", c.args)
	}
}

// --gpu-model adds the claims measured on such GPUs, after a '|' as the
// team layer applies them: four processes sharing an H200 take allgather
// and reduce_scatter from tl/cuda at every size; a team the tables have
// no figures for gets none, and says so.
func TestModelScoresMeasured(t *testing.T) {
	out, stderr, code := runCLI(t, "model", "scores", "--np", "4", "--gpus", "1", "--gpu-model", "NVIDIA H200")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "|allgather:cuda:0-2147483647:41#reduce_scatter:cuda:0-536870911:41\n")
	assert.Contains(t, out, "measured on NVIDIA H200")

	out, stderr, code = runCLI(t, "model", "scores", "--np", "3", "--gpus", "1", "--gpu-model", "NVIDIA H200")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "nothing measured on NVIDIA H200 for this team")
	assert.NotContains(t, out, ":41")

	_, stderr, code = runCLI(t, "model", "scores", "--np", "4", "--gpu-model", "NVIDIA H200")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "--gpu-model needs --gpus")
}
