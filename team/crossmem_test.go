package team

import (
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/crossread"
	"github.com/goring-hpc/goring/direct"
	"github.com/goring-hpc/goring/exec"
)

// allreduceArgs are n ranks' float32 sum allreduce of count elements,
// rank r's element k r + k%7.
func allreduceArgs(t *testing.T, n, count int) []Args {
	args := make([]Args, n)
	for r := range args {
		src, dst := cbuf(t, 4*count), cbuf(t, 4*count)
		for k, v := 0, f32s(src); k < count; k++ {
			v[k] = float32(r + k%7)
		}
		args[r] = Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(dst), Count: uint64(count), Dtype: coll.Float32, Op: coll.Sum}
	}
	return args
}

// checkAllreduce checks a result of allreduceArgs.
func checkAllreduce(t *testing.T, n int, a Args, count int) {
	t.Helper()
	for k, v := range unsafe.Slice((*float32)(a.Dst), count) {
		require.Equal(t, float32(n*(n-1)/2+n*(k%7)), v, "elem %d", k)
	}
}

// crossmem=T: the team layer's collectives with host allreduce and
// allgather read from the peers' buffers (the ranks are one process here,
// which process_vm_readv reads like any other), contents checked, counts
// from fewer elements than ranks to several pieces a thread.
func TestTeamCollectivesByCrossMemoryReads(t *testing.T) {
	teamCollectives(t, "crossmem=3;cpath_max=0", []int{1, 3, 1001, 100_003})
	teams := newTestTeams(t, 4, "crossmem=2;cpath_max=0")
	algs := runAll(t, teams, allreduceArgs(t, 4, 4099))
	for r, tm := range teams {
		assert.Equal(t, "crossmem", algs[r], "rank %d", r)
		require.NotNil(t, tm.cross, "rank %d", r)
		assert.True(t, tm.cross.Verified(), "rank %d: the first call verified the reads", r)
		assert.False(t, tm.crossOff)
	}
}

// Calls crossmem does not take: a named algorithm, sizes the C path
// takes, reduce_scatter, and everything with the option off.
func TestTeamCrossmemChoosesCalls(t *testing.T) {
	teams := newTestTeams(t, 2, "crossmem=2")
	tm := teams[0]
	host := exec.Host
	assert.True(t, tm.runsCrossmem(Args{Coll: coll.Allreduce}, host, 1<<20))
	assert.True(t, tm.runsCrossmem(Args{Coll: coll.Allgather}, host, 1<<20))
	assert.False(t, tm.runsCrossmem(Args{Coll: coll.Allreduce}, host, 1<<10), "the C path's size")
	assert.False(t, tm.runsCrossmem(Args{Coll: coll.Allreduce, Alg: "ring"}, host, 1<<20), "an algorithm named")
	assert.False(t, tm.runsCrossmem(Args{Coll: coll.ReduceScatter}, host, 1<<20))
	off := newTestTeams(t, 2, "")
	assert.Nil(t, off[0].cross)
	assert.False(t, off[0].runsCrossmem(Args{Coll: coll.Allreduce}, host, 1<<20))
}

// refusing is a kernel that refuses every cross-memory read.
type refusing struct{ *crossread.CrossReader }

func (refusing) Read([]byte, int64, uint64) error { return syscall.EPERM }

// Where one rank cannot read its peers, every rank runs the call as
// messages, with the same results, and the team's later calls too.
func TestTeamCrossmemRefusedFallsBackToMessages(t *testing.T) {
	const n = 3
	teams := newTestTeams(t, n, "crossmem=2;cpath_max=0")
	teams[1].cross = direct.NewHost(refusing{&crossread.CrossReader{}}, 2, 1)
	for call := 0; call < 2; call++ {
		args := allreduceArgs(t, n, 70_001)
		algs := runAll(t, teams, args)
		for r, tm := range teams {
			assert.NotEqual(t, "crossmem", algs[r], "call %d rank %d", call, r)
			assert.True(t, tm.crossOff, "rank %d", r)
			checkAllreduce(t, n, args[r], 70_001)
		}
	}
}

func TestOptionCrossmem(t *testing.T) {
	o, err := parseOptions("")
	require.NoError(t, err)
	assert.Equal(t, crossmemOff, o.crossmem, "off by default")
	for v, want := range map[string]int{"off": crossmemOff, "auto": crossmemAuto, "AUTO": crossmemAuto, "4": 4, "16": 16, "no": crossmemOff} {
		o, err := parseOptions("crossmem=" + v)
		require.NoError(t, err, v)
		assert.Equal(t, want, o.crossmem, v)
	}
	for _, bad := range []string{"crossmem=0", "crossmem=17", "crossmem=yes", "crossmem=", "crossmem=-1"} {
		_, err := parseOptions(bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "want off (the default), auto, or a thread count from 1 to 16", bad)
	}
}

// crossmem=auto: a team claims the host sizes tune.CrossCall takes for its
// ranks' threads (UCC counts an allgather's whole result), and runs them
// by cross-memory reads; smaller calls run as messages.
func TestTeamCrossmemAutoClaimsAndRuns(t *testing.T) {
	teams := newTestTeams(t, 2, "crossmem=auto")
	for _, tm := range teams {
		tm.cross, tm.crossDecide = direct.NewHost(&crossread.CrossReader{}, 4, 7), 4 // as on a 16-core host with 2 ranks
	}
	str, summary := teams[0].scores()
	assert.Contains(t, str, "allgather:host:1048576-inf:11", summary)
	assert.Contains(t, str, "allreduce:host:524288-inf:11", summary)
	small := allreduceArgs(t, 2, 64<<10/4*2) // 128 KiB
	assert.NotEqual(t, "crossmem", runAll(t, teams, small)[0])
	large := allreduceArgs(t, 2, 512<<10/4)
	assert.Equal(t, "crossmem", runAll(t, teams, large)[0])
	checkAllreduce(t, 2, large[1], 512<<10/4)
}

// With one thread a rank (each bound to its own core), auto takes the
// 2-rank allgather from 2 MiB a rank and no allreduce.
func TestTeamCrossmemAutoOneThread(t *testing.T) {
	teams := newTestTeams(t, 2, "crossmem=auto")
	for _, tm := range teams {
		tm.cross, tm.crossDecide = direct.NewHost(&crossread.CrossReader{}, 1, 7), 1
	}
	str, summary := teams[0].scores()
	assert.Contains(t, str, "allgather:host:4194304-inf:11", summary)
	assert.NotContains(t, str, "allreduce:host:", summary)
	large := allreduceArgs(t, 2, 16<<20/4)
	assert.NotEqual(t, "crossmem", runAll(t, teams, large)[0])
}

// Every rank decides which calls run by cross-memory reads from the same
// cards: all in one mode or none, auto by the fewest threads any rank has.
func TestCrossAgreement(t *testing.T) {
	cards := func(cs ...crossCard) []card {
		var all []card
		for _, c := range cs {
			all = append(all, card{cross: c})
		}
		return all
	}
	auto := func(n uint8) crossCard { return crossCard{mode: crossCardAuto, threads: n} }
	for _, c := range []struct {
		all    []card
		on     bool
		decide int
	}{
		{cards(auto(4), auto(4)), true, 4},
		{cards(auto(4), auto(1), auto(4)), true, 1},
		{cards(auto(4), crossCard{}), false, 0},
		{cards(crossCard{}, auto(4)), false, 0},
		{cards(auto(4), crossCard{mode: crossCardForced, threads: 4}), false, 0},
		{cards(crossCard{mode: crossCardForced, threads: 2}, crossCard{mode: crossCardForced, threads: 3}), true, 2},
		{cards(auto(4)), false, 0},
		{cards(auto(1), auto(1)), true, 1},
		{cards(auto(1), auto(0)), false, 0}, // a host with more ranks than CPUs
	} {
		on, decide := crossAgreement(c.all)
		assert.Equal(t, c.on, on, "%+v", c.all)
		assert.Equal(t, c.decide, decide, "%+v", c.all)
	}
	teams := newTestTeams(t, 2, "crossmem=3")
	c, err := decodeCard(teams[0].card)
	require.NoError(t, err)
	assert.Equal(t, crossCard{mode: crossCardForced, threads: 3}, c.cross, "the card carries the setting")
	assert.Equal(t, 3, teams[0].crossDecide)
}
