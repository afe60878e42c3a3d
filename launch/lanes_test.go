package launch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLaneAddressesRoundTrip(t *testing.T) {
	one := []byte("worker-address")
	assert.Equal(t, one, EncodeLaneAddresses([][]byte{one}), "one lane: the address unchanged")
	addrs := [][]byte{[]byte("a0"), {}, []byte("lane-two-address")}
	got, err := DecodeLaneAddresses(EncodeLaneAddresses(addrs), 3)
	require.NoError(t, err)
	assert.Equal(t, [][]byte{[]byte("a0"), {}, []byte("lane-two-address")}, got)
	_, err = DecodeLaneAddresses(EncodeLaneAddresses(addrs), 2)
	assert.ErrorContains(t, err, "3 lanes, want 2")
	_, err = DecodeLaneAddresses(EncodeLaneAddresses(addrs)[:5], 3)
	assert.ErrorContains(t, err, "cut short")
}

func TestLaneConfigCopies(t *testing.T) {
	base := map[string]string{"TLS": "self,sm"}
	c := LaneConfig(base, 2)
	c["NET_DEVICES"] = "x"
	assert.Equal(t, map[string]string{"TLS": "self,sm"}, base, "a lane's settings never change the rank's")
}
