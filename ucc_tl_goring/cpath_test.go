//go:build ucc

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCPathMaxOption(t *testing.T) {
	o, err := parseOptions("")
	require.NoError(t, err)
	assert.EqualValues(t, DefaultCPathMax, o.cpathMax)
	for v, want := range map[string]int64{"0": 0, "4096": 4096, "64K": 64 << 10, "1m": 1 << 20, "16M": 16 << 20} {
		o, err := parseOptions("cpath_max=" + v)
		require.NoError(t, err, v)
		assert.Equal(t, want, o.cpathMax, v)
	}
	for _, bad := range []string{"-1", "abc", "17M", "1G", "", "K"} {
		_, err := parseOptions("cpath_max=" + bad)
		assert.ErrorContains(t, err, "cpath_max", bad)
	}
}
