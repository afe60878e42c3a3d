package launch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPackAddressesRoundTrip(t *testing.T) {
	in := [][]byte{[]byte("local"), {}, []byte("rail1")}
	out, err := UnpackAddresses(PackAddresses(in), 3)
	require.NoError(t, err)
	assert.Equal(t, in[0], out[0])
	assert.Empty(t, out[1])
	assert.Equal(t, in[2], out[2])
	_, err = UnpackAddresses(PackAddresses(in), 2)
	assert.ErrorContains(t, err, "3, want 2")
	p := PackAddresses(in)
	_, err = UnpackAddresses(p[:len(p)-1], 3)
	assert.ErrorContains(t, err, "cut short")
	_, err = UnpackAddresses([]byte{0, 0}, 1)
	assert.ErrorContains(t, err, "cut short")
}

func TestRailDevice(t *testing.T) { assert.Equal(t, "rail3", RailDevice(3)) }
