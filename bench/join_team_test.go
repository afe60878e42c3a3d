package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/launch"
)

// The team context's options for a job: the transports where UCX_TLS is
// not set, the push engine, the calibration; a context per lane count.
func TestTeamOptions(t *testing.T) {
	t.Setenv("UCX_TLS", "")
	t.Setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "")
	assert.Equal(t, "lanes=1;tls="+launch.DefaultUCXTLS, TeamOptions{IPC: true}.For(1))
	assert.Equal(t, "lanes=4;tls="+launch.DefaultUCXTLS+",cuda;ipc=n;calibration=/c.json",
		TeamOptions{CUDA: true, Calibration: "/c.json"}.For(4))
	t.Setenv("UCX_TLS", "tcp")
	assert.Equal(t, "lanes=2", TeamOptions{IPC: true}.For(2), "UCX_TLS is UCX's to read")
	assert.Equal(t, "lanes=auto", TeamOptions{IPC: true, AutoLanes: true}.For(1), "--lanes auto: the team's lanes")
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
