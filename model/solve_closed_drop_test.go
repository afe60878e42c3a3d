package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Dropping the direct path also lifts the contention it puts on the staged
// paths, so the local search's screen (dropMayHelp: only launch offsets
// change) must not skip that move. Three staged paths of 150 GB/s that
// keep a fifth of their rate next to the direct copy carry 450 GB/s
// without it and 290 GB/s with it (200 + 3*30): the closed form must find
// the set without the direct path, as the reference solver does.
func TestClosedFormDropsDirectPathThatSlowsTheOthers(t *testing.T) {
	const n = 256 << 20
	o := DefaultOptions()
	paths := []Path{{Name: DirectName, Alpha1US: 5, Beta1GBps: 200}}
	for k := 2; k <= 4; k++ {
		paths = append(paths, Path{Name: GPUStagedName(k), Alpha1US: 5, Beta1GBps: 150, Alpha2US: 5, Beta2GBps: 150,
			EpsilonUS: 3, Staged: true, Contention: Contention{StagedSlowdown: 0.8}})
	}
	closed, err := Solve(paths, n, o, false)
	require.NoError(t, err)
	exact, err := Solve(paths, n, o, true)
	require.NoError(t, err)
	require.Zero(t, exact.Paths[0].Bytes, "the reference solver leaves the direct path out")
	assert.Zero(t, closed.Paths[0].Bytes, "the closed form leaves the direct path out")
	assert.InEpsilon(t, exact.PredictedUS, closed.PredictedUS, 0.02, "closed form within 2%% of the reference solver")
}
