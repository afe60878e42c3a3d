package team

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/calib"
	"github.com/goring-hpc/goring/cudaexec"
	"github.com/goring-hpc/goring/tune"
)

// The model's claims per team shape (scores.go): on CUDA memory of one
// host goring's push beats tl/ucp's rendezvous per message, so it claims
// every scored collective at some size; on host memory, and across hosts,
// it claims nothing.
func TestModelScores(t *testing.T) {
	opts, err := parseOptions("")
	require.NoError(t, err)
	team := func(size int, oneHost bool) *Team {
		return &Team{ctx: &Context{opts: opts}, size: size, oneHost: oneHost, engine: cudaexec.NewEngine()}
	}
	// Four processes on one GPU: allgather (multiwrite, one step against
	// tl/ucp's neighbour exchange) at every size, counted as UCC counts
	// it (the whole result).
	tm := team(4, true)
	str, line := claims(tune.Shape{Size: 4, OneHost: true, GPUs: 1, CMax: 64 << 10}, tm.teamAlg)
	t.Log("4 processes, one GPU: ", line) // docs/ucc.md's table, with -v
	assert.Contains(t, str, "allgather:cuda:0-inf:11", line)
	for _, c := range tune.ScoredColls {
		assert.Contains(t, str, string(c)+":cuda:", "%s: %s", c, line)
	}
	assert.NotContains(t, str, ":host:", line)
	assert.True(t, strings.HasPrefix(line, "claims "), line)
	// Two ranks, two GPUs: claimed too, with the two-GPU team's own
	// defaults (ring allreduce from 64 MiB).
	str, line = claims(tune.Shape{Size: 2, OneHost: true, GPUs: 2}, team(2, true).teamAlg)
	t.Log("2 ranks, 2 GPUs: ", line)
	_, l := claims(tune.Shape{Size: 2, OneHost: true, GPUs: 1}, team(2, true).teamAlg)
	t.Log("2 processes, one GPU: ", l)
	_, l = claims(tune.Shape{Size: 8, OneHost: true, GPUs: 8}, team(8, true).teamAlg)
	t.Log("8 ranks, 8 GPUs: ", l)
	assert.Contains(t, str, "allreduce:cuda:0-", line)
	// With the calibration of the machine (two H100, a rank per GPU): the
	// measured links, and still claimed.
	f, err := os.Open("../calib/testdata/calibration_h100x2_engine.json")
	require.NoError(t, err)
	cal, err := calib.Load(f)
	f.Close()
	require.NoError(t, err)
	str, line = claims(tune.Shape{Size: 2, OneHost: true, GPUs: 2, Cal: cal, CalName: "h100x2.json", GPUModel: "NVIDIA H100 80GB HBM3"}, team(2, true).teamAlg)
	assert.Contains(t, line, "on the links of h100x2.json")
	assert.Contains(t, str, "allgather:cuda:0-", line)
	t.Log("2 ranks, 2 H100, calibrated: ", line)
	// A calibration of another machine is left aside, with the reason.
	_, line = claims(tune.Shape{Size: 2, OneHost: true, GPUs: 2, Cal: cal, CalName: "h100x2.json", GPUModel: "NVIDIA H200"}, team(2, true).teamAlg)
	assert.Contains(t, line, "without the calibration")
	// No driver: nothing on CUDA, and host memory claims nothing.
	str, line = claims(tune.Shape{Size: 4, OneHost: true}, tm.teamAlg)
	assert.Empty(t, str)
	assert.Contains(t, line, "claims nothing")
	assert.Contains(t, line, "no CUDA driver")
	// More ranks than GPUs but more than one GPU: no model.
	str, line = claims(tune.Shape{Size: 8, OneHost: true, GPUs: 2}, team(8, true).teamAlg)
	assert.Empty(t, str)
	assert.Contains(t, line, "8 ranks on 2 GPUs")
	// Beyond the model's team Size: nothing, and says so.
	str, line = claims(tune.Shape{Size: 17, OneHost: true, GPUs: 32}, team(17, true).teamAlg)
	assert.Empty(t, str)
	assert.Contains(t, line, "up to 16")
	// Across hosts: no model at all.
	str, line = claims(tune.Shape{Size: 4, GPUs: 1}, team(4, false).teamAlg)
	assert.Empty(t, str)
	assert.Contains(t, line, "spans hosts")
	str, _ = claims(tune.Shape{Size: 1, OneHost: true, GPUs: 1}, team(1, true).teamAlg)
	assert.Empty(t, str)
}

// A user's algorithm for a collective is what the model predicts for it,
// and scores=fixed turns the model off.
func TestModelScoresFollowOptions(t *testing.T) {
	opts, err := parseOptions("alg_allgather=ring")
	require.NoError(t, err)
	tm := &Team{ctx: &Context{opts: opts}, size: 4, oneHost: true, engine: cudaexec.NewEngine()}
	alg, fallback := tm.teamAlg("allgather", 1<<20, false)
	assert.Equal(t, "ring", alg)
	assert.Empty(t, fallback)
	str, line := claims(tune.Shape{Size: 4, OneHost: true, GPUs: 1}, tm.teamAlg)
	assert.NotContains(t, str, "allgather:", "ring's three steps against tl/ucp's two: %s", line)

	opts, err = parseOptions("scores=fixed")
	require.NoError(t, err)
	tm.ctx = &Context{opts: opts}
	str, line = tm.scores()
	assert.Empty(t, str)
	assert.Contains(t, line, "scores=fixed")
	for _, bad := range []string{"scores=", "scores=yes", "scores=Model"} {
		_, err := parseOptions(bad)
		assert.Error(t, err, bad)
	}
}

// claims is tune.Claims without the predictions.
func claims(s tune.Shape, choose tune.MemChooser) (string, string) {
	str, _, line := tune.Claims(s, choose)
	return str, line
}
