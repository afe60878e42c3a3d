package nodeexec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/cuda"
	"github.com/goring-hpc/goring/devsync"
)

// A rank whose first kernel of a call fails to launch has not taken the
// call's epoch, while its peers, whose launches worked, wait in that
// epoch's kernel. If it went on, its next call would run with that same
// epoch, and its flags would release the peers' kernels of the other
// call: wrong data, silently. So a launch that fails, the first one of
// a call too, stops the team's node calls. (The grid is refused here
// before any device is touched; on a GPU the same path is taken by a
// launch or module load that fails on one rank only.)
func TestFailedFirstLaunchStopsTheTeam(t *testing.T) {
	l := &Local{rank: 0, size: 2, slot: 1 << 10, ptrs: []cuda.DevicePtr{0x1000, 0x2000},
		epoch: devsync.FirstEpoch - 1, grid: func(int) cuda.NodeGrid { return cuda.NodeGrid{} }}
	call := Call{Collective: coll.Allreduce, Dtype: coll.Float32, Op: coll.Sum, Count: 8, In: 0x10000, Out: 0x20000}
	first := l.Begin(call)
	require.Error(t, first)
	assert.Equal(t, devsync.FirstEpoch-1, l.epoch, "no kernel launched: the epoch is not taken")
	err := l.Begin(call)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the team's node calls stopped", "a later call must not run on the epoch the peers wait in")
}
