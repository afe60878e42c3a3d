package team

import (
	"testing"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/exec"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCPathMaxOption(t *testing.T) {
	o, err := parseOptions("")
	require.NoError(t, err)
	assert.EqualValues(t, defaultCPathMax, o.cpathMax)
	for v, want := range map[string]int64{"0": 0, "4096": 4096, "64K": 64 << 10, "1m": 1 << 20, "16M": 16 << 20} {
		o, err := parseOptions("cpath_max=" + v)
		require.NoError(t, err, v)
		assert.Equal(t, want, o.cpathMax, v)
	}
	for _, bad := range []string{"-1", "abc", "17M", "1G", "", "K"} {
		_, err := parseOptions("cpath_max=" + bad)
		assert.ErrorContains(t, err, "cpath_max", bad)
	}
}

// Small host allreduces (to 4 KiB) and allgathers (to 8 KiB) default to
// recursive doubling, falling back to the host default where it does not
// serve; above, or with an algorithm the user or the call chose, the small
// default does not apply.
func TestSmallHostDefaults(t *testing.T) {
	plain, err := parseOptions("")
	require.NoError(t, err)
	chosen, err := parseOptions("alg_allreduce=ring")
	require.NoError(t, err)
	f32 := func(c coll.Collective, bytes int64, alg string) Args {
		return Args{Coll: c, Count: uint64(bytes / 4), Dtype: coll.Float32, Op: coll.Sum, Alg: alg}
	}
	host := exec.Mem{}
	cases := []struct {
		opts          options
		args          Args
		alg, fallback string
	}{
		{plain, f32(coll.Allreduce, 4, ""), "recursive_doubling", "rabenseifner"},
		{plain, f32(coll.Allreduce, 4<<10, ""), "recursive_doubling", "rabenseifner"},
		{plain, f32(coll.Allreduce, 4<<10+4, ""), "rabenseifner", ""},
		{plain, f32(coll.Allreduce, 64, "ring"), "ring", ""},
		{chosen, f32(coll.Allreduce, 64, ""), "ring", ""},
		{plain, f32(coll.Allgather, 8<<10, ""), "recursive_doubling", "ring"},
		{plain, f32(coll.Allgather, 8<<10+4, ""), "ring", ""},
		{plain, f32(coll.Bcast, 64, ""), "knomial", ""},
	}
	for _, c := range cases {
		tm := &Team{ctx: &Context{opts: c.opts}, size: 3}
		alg, fallback, err := tm.algorithmFor(c.args, host)
		require.NoError(t, err)
		assert.Equal(t, c.alg, alg, "%+v", c.args)
		assert.Equal(t, c.fallback, fallback, "%+v", c.args)
	}
}
