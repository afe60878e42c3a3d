package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func loadTestPaths() []Path {
	return []Path{
		{Name: DirectName, Alpha1US: 10, Beta1GBps: 390},
		{Name: HostName, Staged: true, Alpha1US: 5, Beta1GBps: 100, Alpha2US: 6, Beta2GBps: 102, EpsilonUS: 3,
			Contention: Contention{DirectSlowdown: 0.1, StagedSlowdown: 0.2}},
	}
}

// An idle pair keeps its figures; the input is never modified.
func TestLoadedPathsIdle(t *testing.T) {
	in := loadTestPaths()
	for _, l := range []Load{{}, {Out: 1}, {Out: 1, Senders: 1}} {
		assert.Equal(t, in, LoadedPaths(in, l))
	}
	_ = LoadedPaths(in, Load{Out: 3, In: 2, Senders: 4})
	assert.Equal(t, loadTestPaths(), in)
}

// The rule, by hand: a 2-GPU ring round (one push out, one in, both GPUs
// pushing) and a MultiWrite step on four GPUs.
func TestLoadedPathsRule(t *testing.T) {
	ring := LoadedPaths(loadTestPaths(), Load{Out: 1, In: 1, Senders: 2})
	assert.InDelta(t, 390, ring[0].Beta1GBps, 1e-9, "one push out: the direct path keeps its rate")
	assert.InDelta(t, 50, ring[1].Beta1GBps, 1e-9, "host path shared by both GPUs' staged shares")
	assert.InDelta(t, 51, ring[1].Beta2GBps, 1e-9)
	assert.InDelta(t, 1-0.9*0.9, ring[1].Contention.DirectSlowdown, 1e-12)
	assert.InDelta(t, 1-0.8*0.8, ring[1].Contention.StagedSlowdown, 1e-12)
	assert.Equal(t, 5.0, ring[1].Alpha1US, "startups unchanged")

	mw := LoadedPaths(loadTestPaths(), Load{Out: 3, In: 3, Senders: 4})
	assert.InDelta(t, 130, mw[0].Beta1GBps, 1e-9)
	assert.InDelta(t, 100.0/12, mw[1].Beta1GBps, 1e-9)
	assert.InDelta(t, 1-0.8*0.8*0.8*0.8*0.8*0.8, mw[1].Contention.StagedSlowdown, 1e-12)
	require.True(t, mw[1].Contention.valid())
}

// More load never makes the model put more bytes on the staged path.
func TestLoadedSplitShrinksWithLoad(t *testing.T) {
	o := DefaultOptions()
	paths := loadTestPaths()
	paths[1].Contention = Contention{StagedSlowdown: 0.2}
	n := int64(256 << 20)
	staged := func(l Load) int64 {
		s, err := Solve(LoadedPaths(paths, l), n, o, false)
		require.NoError(t, err)
		var b int64
		for _, sh := range s.Paths {
			if sh.Path.Staged {
				b += sh.Bytes
			}
		}
		return b
	}
	idle := staged(Load{Out: 1})
	require.Positive(t, idle, "an idle pair splits")
	prev := idle
	for _, l := range []Load{{Out: 1, In: 1, Senders: 2}, {Out: 2, In: 2, Senders: 2}, {Out: 3, In: 3, Senders: 4}} {
		got := staged(l)
		assert.Less(t, got, prev, "%+v", l)
		prev = got
	}
}
