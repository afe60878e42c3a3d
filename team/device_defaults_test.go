package team

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cudaexec"
	"github.com/goring-hpc/goring/exec"
)

// The device defaults of a team (gpu.go): a pair on the push engine runs
// large allreduces as ring in two pieces, and pipelines large
// reduce_scatters; smaller calls, bigger teams, teams without the engine,
// host memory and a user's own choice keep what they had.
func TestDeviceDefaultsLargePushPair(t *testing.T) {
	opts, err := parseOptions("")
	require.NoError(t, err)
	team := func(size int, engine, oneHost bool) *Team {
		tm := &Team{ctx: &Context{opts: opts}, size: size, oneHost: oneHost}
		if engine {
			tm.engine = cudaexec.NewEngine()
		}
		return tm
	}
	dev := exec.Mem{Kind: exec.MemCUDA}
	f32 := func(c coll.Collective, bytes int64, alg string) Args {
		return Args{Coll: c, Count: uint64(bytes / 4), Dtype: coll.Float32, Op: coll.Sum, Alg: alg}
	}
	cases := []struct {
		tm        *Team
		args      Args
		mem       exec.Mem
		alg       string
		chunks    int
		situation string
	}{
		{team(2, true, true), f32(coll.Allreduce, 64<<20, ""), dev, "ring", 2, "pair, 64 MiB"},
		{team(2, true, true), f32(coll.Allreduce, 1<<30, ""), dev, "ring", 2, "pair, 1 GiB"},
		{team(2, true, true), f32(coll.Allreduce, 64<<20-4, ""), dev, "recursive_doubling", 0, "pair, just under 64 MiB"},
		{team(2, true, true), f32(coll.ReduceScatter, 64<<20, ""), dev, "ring", 2, "pair, reduce_scatter 64 MiB"},
		{team(2, true, true), f32(coll.Allgather, 256<<20, ""), dev, "multiwrite", 0, "pair, allgather: no pieces"},
		{team(4, true, true), f32(coll.Allreduce, 256<<20, ""), dev, "recursive_doubling", 0, "four ranks"},
		{team(2, false, true), f32(coll.Allreduce, 256<<20, ""), dev, "recursive_doubling", 0, "no push engine"},
		{team(2, true, false), f32(coll.Allreduce, 256<<20, ""), dev, "recursive_doubling", 0, "ranks on other hosts"},
		{team(2, true, true), f32(coll.Allreduce, 256<<20, ""), exec.Mem{}, "rabenseifner", 0, "host memory"},
		{team(2, true, true), f32(coll.Allreduce, 256<<20, "rabenseifner"), dev, "rabenseifner", 0, "the call's own algorithm"},
	}
	for _, c := range cases {
		alg, _, err := c.tm.algorithmFor(c.args, c.mem)
		require.NoError(t, err, c.situation)
		B := int64(c.args.Count) * 4
		assert.Equal(t, c.alg, alg, c.situation)
		assert.Equal(t, c.chunks, c.tm.deviceChunks(c.args, B, c.mem), c.situation)
	}
}

// A team whose every process sees the same single GPU (the cards agree,
// team.sharedGPU) runs allreduce, allgather and reduce_scatter (up to 8
// ranks) on CUDA buffers as the leader algorithms, as one process's device
// work (onedevice.go), and bcast so when asked; host memory, a team
// without the engine, a larger reduce_scatter and another algorithm do
// not.
func TestSharedGPUDefaults(t *testing.T) {
	opts, err := parseOptions("")
	require.NoError(t, err)
	team := func(size int, shared, engine bool) *Team {
		tm := &Team{ctx: &Context{opts: opts}, size: size, oneHost: true, sharedGPU: shared}
		if engine {
			tm.engine = cudaexec.NewEngine()
		}
		return tm
	}
	dev := exec.Mem{Kind: exec.MemCUDA}
	f32 := func(c coll.Collective, alg string) Args {
		return Args{Coll: c, Count: 1 << 20, Dtype: coll.Float32, Op: coll.Sum, Alg: alg}
	}
	for _, c := range []struct {
		tm        *Team
		args      Args
		mem       exec.Mem
		alg       string
		oneDevice bool
		situation string
	}{
		{team(4, true, true), f32(coll.Allreduce, ""), dev, "leader", true, "allreduce"},
		{team(4, true, true), f32(coll.Allgather, ""), dev, "leader", true, "allgather"},
		{team(4, true, true), f32(coll.ReduceScatter, ""), dev, "leader", true, "reduce_scatter"},
		{team(4, true, true), f32(coll.Bcast, ""), dev, "knomial", false, "bcast keeps knomial"},
		{team(4, true, true), f32(coll.Bcast, "leader"), dev, "leader", true, "bcast leader asked for"},
		{team(9, true, true), f32(coll.ReduceScatter, ""), dev, "ring", false, "reduce_scatter of 9: more than one fused step"},
		{team(9, true, true), f32(coll.ReduceScatter, "leader"), dev, "leader", false, "reduce_scatter of 9 asked for: messages"},
		{team(9, true, true), f32(coll.Allreduce, ""), dev, "leader", true, "allreduce of 9"},
		{team(4, true, true), f32(coll.Allreduce, ""), exec.Mem{}, "rabenseifner", false, "host memory"},
		{team(4, true, false), f32(coll.Allreduce, ""), dev, "recursive_doubling", false, "no push engine"},
		{team(4, false, true), f32(coll.Allreduce, ""), dev, "recursive_doubling", false, "GPUs differ"},
		{team(4, true, true), f32(coll.Allreduce, "ring"), dev, "ring", false, "the call's own algorithm"},
		{team(4, false, true), f32(coll.Allreduce, "leader"), dev, "leader", false, "leader asked for, GPUs differ: messages"},
	} {
		alg, _, err := c.tm.algorithmFor(c.args, c.mem)
		require.NoError(t, err, c.situation)
		assert.Equal(t, c.alg, alg, c.situation)
		assert.Equal(t, c.oneDevice, c.tm.runsOnOneDevice(c.args, alg, c.mem), c.situation)
	}
}
