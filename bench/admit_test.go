package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/sched"
)

// "all" names every registered algorithm, auto the team's choice, a name
// itself if registered.
func TestCandidates(t *testing.T) {
	all, err := Candidates(coll.Allgather, "all")
	require.NoError(t, err)
	assert.Len(t, all, len(sched.Algorithms(coll.Allgather)))
	assert.Contains(t, all, "ring")
	one, err := Candidates(coll.Allgather, "ring")
	require.NoError(t, err)
	assert.Equal(t, []string{"ring"}, one)
	auto, err := Candidates(coll.Allgather, Auto)
	require.NoError(t, err)
	assert.Equal(t, []string{Auto}, auto)
	_, err = Candidates(coll.Allgather, "nosuch")
	assert.Error(t, err)
}

// An algorithm that serves some sizes runs and names the others as
// skipped; named by the user (strict), a size it does not serve is an
// error.
func TestAdmit(t *testing.T) {
	tp, err := EmulatedTopology(1, 3)
	require.NoError(t, err)
	cfg := &Config{Topo: tp, Collective: coll.Allgather, Sizes: []int64{64, 1024}}
	runs, skipped, err := cfg.Admit("ring", true)
	require.NoError(t, err)
	assert.True(t, runs)
	assert.Empty(t, skipped)

	// recursive doubling needs a power-of-two team.
	runs, skipped, err = cfg.Admit("recursive_doubling", false)
	require.NoError(t, err)
	assert.False(t, runs)
	assert.Contains(t, skipped, "recursive_doubling at 64 bytes")
	_, _, err = cfg.Admit("recursive_doubling", true)
	assert.ErrorContains(t, err, "on 3 ranks")
}
