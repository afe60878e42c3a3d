package topo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTCRate(t *testing.T) {
	for s, want := range map[string]float64{"500mbit": 0.0625, "1Gbit": 0.125, "800Kbit": 1e-4, "8bit": 1e-9, "2.5gbit": 0.3125} {
		got, err := ParseTCRate(s)
		require.NoError(t, err, s)
		assert.InDelta(t, want, got, want*1e-9, s)
	}
	for _, bad := range []string{"", "500", "500mb", "-1mbit", "0mbit", "fastbit"} {
		_, err := ParseTCRate(bad)
		assert.Error(t, err, bad)
	}
}
