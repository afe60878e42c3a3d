package team

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/choose"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cudaexec"
)

// A lazy team's calls load their GPU's kernels at init (loadKernelsOn),
// but once per GPU: a load that worked is not repeated, a failed one is
// tried again at the next call, and a team that comes to need the node
// family (mayRunNode) loads it although the rest was loaded.
func TestLoadKernelsOnLoadsOncePerGPU(t *testing.T) {
	type load struct {
		ord  int
		node bool
	}
	var loads []load
	fail := false
	saved := loadKernelsOnGPU
	t.Cleanup(func() { loadKernelsOnGPU = saved })
	loadKernelsOnGPU = func(ord int, node bool) error {
		loads = append(loads, load{ord, node})
		if fail {
			return errors.New("no such GPU")
		}
		return nil
	}
	opts, err := parseOptions("")
	require.NoError(t, err)
	require.Positive(t, opts.nodeMax)
	tm := &Team{ctx: &Context{opts: opts}, size: 2, oneHost: true}
	require.True(t, tm.mayRunNode())

	tm.loadKernelsOn(0)
	tm.loadKernelsOn(0)
	tm.loadKernelsOn(0)
	assert.Equal(t, []load{{0, true}}, loads, "one load for three calls on GPU 0")
	tm.loadKernelsOn(1)
	tm.loadKernelsOn(1)
	assert.Equal(t, []load{{0, true}, {1, true}}, loads, "GPU 1 loads its own")

	fail = true
	tm.loadKernelsOn(2)
	tm.loadKernelsOn(2)
	assert.Len(t, loads, 4, "a failed load is tried again at the next call")
	fail = false
	tm.loadKernelsOn(2)
	tm.loadKernelsOn(2)
	assert.Len(t, loads, 5, "and not after it worked")

	// Without the node family first, with it once the team may run it.
	loads = nil
	tm2 := &Team{ctx: &Context{opts: opts}, size: 2, oneHost: false}
	require.False(t, tm2.mayRunNode())
	tm2.loadKernelsOn(0)
	tm2.loadKernelsOn(0)
	assert.Equal(t, []load{{0, false}}, loads)
	tm2.oneHost = true
	tm2.loadKernelsOn(0)
	tm2.loadKernelsOn(0)
	assert.Equal(t, []load{{0, false}, {0, true}}, loads, "the node family loaded when needed, once")
	tm2.oneHost = false
	tm2.loadKernelsOn(0)
	assert.Len(t, loads, 2, "what was loaded serves a team that needs less")
}

// goring's choice is made once per key and reused (choiceMemo), and every
// input of the choice is in the key: the bytes, the memory, the collective,
// the team's shape (push engine, GPUs, nodes), its topology and the table.
// A reused choice is the one a fresh team (no memo) makes.
func TestChoiceMemoReusesAndKeysEveryInput(t *testing.T) {
	opts, err := parseOptions("")
	require.NoError(t, err)
	hosts := []string{"h", "h", "h", "h"}
	mk := func() *Team {
		tp, err := teamTopology(hosts)
		require.NoError(t, err)
		tm := &Team{ctx: &Context{opts: opts}, size: 4, engine: cudaexec.NewEngine(), topo: tp}
		tm.placeFrom(cardsNaming("", "", "", ""))
		tm.gpuCountOnce.Do(func() { tm.gpuCount = 4 })
		return tm
	}
	tm := mk()
	ask := func(c coll.Collective, B int64, host bool) choose.Choice {
		ch := tm.choice(c, B, host)
		assert.Equal(t, mk().choice(c, B, host), ch, "%s %d host=%v: as a fresh team chooses", c, B, host)
		return ch
	}
	ask(coll.Allreduce, 16<<10, false)
	ask(coll.Allreduce, 16<<10, false)
	ask(coll.Allreduce, 16<<10, false)
	assert.Equal(t, 1, tm.choices.misses, "one scan for three asks")

	misses := tm.choices.misses
	ask(coll.Allreduce, 32<<10, false)
	ask(coll.Allreduce, 16<<10, true)
	ask(coll.Allgather, 16<<10, false)
	assert.Equal(t, misses+3, tm.choices.misses, "another size, memory, collective: another choice")

	// The team's shape changes: no push engine (the shape's Push), the
	// GPUs it sees, its topology. Each asks anew and answers as a team
	// made that way does.
	misses = tm.choices.misses
	noPush := tm.choice(coll.Allgather, 256<<20, false)
	tm.engine = nil
	fresh := mk()
	fresh.engine = nil
	assert.Equal(t, fresh.choice(coll.Allgather, 256<<20, false), tm.choice(coll.Allgather, 256<<20, false))
	assert.NotEqual(t, noPush, tm.choice(coll.Allgather, 256<<20, false), "the row for the push engine is not reused without it")
	assert.Equal(t, misses+2, tm.choices.misses)

	// Another topology of as many nodes (SetTopology, connect): the
	// model prices on it, so the choice is made again.
	tp := *tm.topo
	misses = tm.choices.misses
	tm.topo = &tp
	tm.choice(coll.Allgather, 256<<20, false)
	assert.Equal(t, misses+1, tm.choices.misses, "another topology: another choice")

	// Another table (a program that swaps it): nothing of the old reused.
	saved := choose.Table
	t.Cleanup(func() { choose.Table = saved })
	misses = tm.choices.misses
	choose.Table = append([]choose.Row(nil), saved...)
	tm.choice(coll.Allgather, 256<<20, false)
	assert.Equal(t, misses+1, tm.choices.misses, "another table: another choice")
}

// The memo stays bounded: a team that calls with many sizes keeps at most
// choiceMemoMax of them.
func TestChoiceMemoBounded(t *testing.T) {
	opts, err := parseOptions("")
	require.NoError(t, err)
	tm := &Team{ctx: &Context{opts: opts}, size: 2}
	for i := range 3 * choiceMemoMax {
		tm.choice(coll.Allreduce, int64(i+1)*4, true)
		assert.LessOrEqual(t, len(tm.choices.m), choiceMemoMax)
	}
}
