package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/launch"
)

// Which jobs run through the team layer, and the team context's options
// for the flags: everything but the namespace testbed and dispatch or
// combine on device memory; a context per lane count.
func TestBenchThroughTeam(t *testing.T) {
	job := func(c coll.Collective) *benchJob { return &benchJob{cfg: bench.Config{Collective: c}} }
	assert.True(t, benchThroughTeam(&benchFlags{mem: "host"}, job(coll.Allreduce)))
	assert.True(t, benchThroughTeam(&benchFlags{mem: "cuda"}, job(coll.Allreduce)))
	assert.True(t, benchThroughTeam(&benchFlags{mem: "host"}, job(coll.Dispatch)))
	assert.False(t, benchThroughTeam(&benchFlags{mem: "cuda"}, job(coll.Combine)), "dispatch and combine on device memory")
	assert.False(t, benchThroughTeam(&benchFlags{mem: "host", netns: netnsFlags{prefix: "gr"}}, job(coll.Allreduce)), "the testbed")

	t.Setenv("UCX_TLS", "")
	t.Setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "")
	assert.Equal(t, "lanes=1;tls="+launch.DefaultUCXTLS, benchTeamOptions(&benchFlags{mem: "host", ipc: true}, 1))
	assert.Equal(t, "lanes=4;tls="+launch.DefaultUCXTLS+",cuda;ipc=n;calibration=/c.json",
		benchTeamOptions(&benchFlags{mem: "cuda", calibration: "/c.json"}, 4))
	t.Setenv("UCX_TLS", "tcp")
	assert.Equal(t, "lanes=2", benchTeamOptions(&benchFlags{mem: "host", ipc: true}, 2), "UCX_TLS is UCX's to read")
	assert.Equal(t, "lanes=auto", benchTeamOptions(&benchFlags{mem: "host", ipc: true, lanes: "auto"}, 1), "--lanes auto: the team's lanes")
}

// Each rank's hello carries one card per team; team i's cards are laid in
// slots of its longest card, as goring_team_connect takes them.
func TestTeamCards(t *testing.T) {
	peers := []launch.Peer{
		{Payload: launch.EncodeLaneAddresses([][]byte{[]byte("a0"), []byte("b00")})},
		{Payload: launch.EncodeLaneAddresses([][]byte{[]byte("a111"), []byte("b")})},
	}
	cards, slot, err := teamCards(peers, 0, 2)
	require.NoError(t, err)
	assert.Equal(t, 4, slot)
	assert.Equal(t, []byte("a0\x00\x00a111"), cards)
	cards, slot, err = teamCards(peers, 1, 2)
	require.NoError(t, err)
	assert.Equal(t, 3, slot)
	assert.Equal(t, []byte("b00b\x00\x00"), cards)
	one := []launch.Peer{{Payload: []byte("card")}}
	cards, slot, err = teamCards(one, 0, 1)
	require.NoError(t, err)
	assert.Equal(t, []byte("card"), cards)
	assert.Equal(t, 4, slot)
	_, _, err = teamCards(one, 0, 2)
	assert.Error(t, err, "a hello of one card where two are expected")
}
