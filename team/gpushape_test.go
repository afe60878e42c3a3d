package team

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cudaexec"
)

// cardsNaming are the members' cards of a team on one host whose
// processes see the GPUs named (one each; "" sees several or none).
func cardsNaming(gpus ...string) []card {
	all := make([]card, len(gpus))
	for r, g := range gpus {
		all[r] = card{host: "h", gpu: g}
	}
	return all
}

// A team whose every process sees one GPU of its own (CUDA_VISIBLE_DEVICES
// per rank: the cards name as many GPUs as ranks) has a GPU a rank,
// although this process sees one: its shape is that of a host with a GPU
// a rank, for goring's choice (neighbor allgather from three ranks, the
// measured row for a GPU each) and for the model (the GPU regime, not the
// shared one's). Ranks that share some GPUs are neither.
func TestShapeOfAGPUEachByTheCards(t *testing.T) {
	opts, err := parseOptions("")
	require.NoError(t, err)
	team := func(seen int, cards []card) *Team {
		tm := &Team{ctx: &Context{opts: opts}, size: len(cards), engine: cudaexec.NewEngine()}
		tm.placeFrom(cards)
		tm.gpuCountOnce.Do(func() { tm.gpuCount = seen })
		return tm
	}
	each := team(1, cardsNaming("0000:19:00.0", "0000:3b:00.0", "0000:4c:00.0", "0000:5d:00.0"))
	require.True(t, each.oneHost)
	require.False(t, each.sharedGPU)
	assert.Equal(t, 4, each.shape().GPUs, "four ranks, a GPU each")
	assert.Equal(t, "neighbor", each.choice(coll.Allgather, 256<<20, false).Alg, "the row measured for a GPU each")
	assert.Equal(t, each.choice(coll.Allgather, 256<<20, false).Alg,
		team(4, cardsNaming("", "", "", "")).choice(coll.Allgather, 256<<20, false).Alg,
		"as where every process sees the host's four GPUs")
	regimes, _ := each.shape().Regimes()
	assert.Equal(t, "one host, 4 GPUs", regimes["cuda"].Name)

	shared := team(1, cardsNaming("0000:19:00.0", "0000:19:00.0", "0000:19:00.0", "0000:19:00.0"))
	assert.True(t, shared.sharedGPU)
	assert.Equal(t, 1, shared.shape().GPUs, "four processes on one GPU")

	// Two GPUs, two ranks on each: no model of ranks sharing several GPUs.
	pairs := team(1, cardsNaming("0000:19:00.0", "0000:19:00.0", "0000:3b:00.0", "0000:3b:00.0"))
	assert.False(t, pairs.sharedGPU)
	assert.Equal(t, 2, pairs.shape().GPUs)
	regimes, _ = pairs.shape().Regimes()
	assert.NotContains(t, regimes, "cuda", "four ranks on two GPUs")
}

// The tables measured on a node stand only for a team of their shape: a
// team of four ranks on a host of two GPUs (each process sees both, so no
// card names one) has ranks that share a GPU, whose node kernels turn off
// at the first call; it gets none of the four-GPU table's claims, while
// four ranks with a GPU each, seen as four or one a process, do.
func TestNodeClaimsNeedAGPUARank(t *testing.T) {
	defer func(f func(int) (string, error)) { deviceName = f }(deviceName)
	deviceName = func(int) (string, error) { return "NVIDIA H200", nil }
	opts, err := parseOptions("")
	require.NoError(t, err)
	team := func(seen int, cards []card) *Team {
		tm := &Team{ctx: &Context{opts: opts}, size: len(cards), engine: cudaexec.NewEngine()}
		tm.placeFrom(cards)
		tm.gpuCountOnce.Do(func() { tm.gpuCount = seen })
		tm.SetLayers([]string{"ucp", "cuda", "nccl", "goring"})
		return tm
	}
	measured := "reduce_scatter:cuda:0-536870911:41" // the four-H200 table's, above tl/cuda's
	str, line := team(4, cardsNaming("", "", "", "")).scores()
	assert.Contains(t, str, measured, "four ranks on four GPUs: %s", line)
	str, line = team(1, cardsNaming("0000:19:00.0", "0000:3b:00.0", "0000:4c:00.0", "0000:5d:00.0")).scores()
	assert.Contains(t, str, measured, "four ranks, one GPU a process: %s", line)
	str, line = team(2, cardsNaming("", "", "", "")).scores()
	assert.NotContains(t, str, ":41", "four ranks on two GPUs: %s", line)
	str, line = team(1, cardsNaming("0000:19:00.0", "0000:19:00.0", "0000:3b:00.0", "0000:3b:00.0")).scores()
	assert.NotContains(t, str, ":41", "two ranks on each of two GPUs: %s", line)
}
