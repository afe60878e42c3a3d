package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A matrix for a typed plan keeps whole elements: every entry rounded
// down; one-byte elements leave it as it is.
func TestWholeElements(t *testing.T) {
	gen := func(int64) ([][]int64, error) { return [][]int64{{0, 7}, {9, 12}}, nil }
	m, err := WholeElements(gen, 4)(1)
	require.NoError(t, err)
	assert.Equal(t, [][]int64{{0, 4}, {8, 12}}, m)
	m, err = WholeElements(gen, 1)(1)
	require.NoError(t, err)
	assert.Equal(t, [][]int64{{0, 7}, {9, 12}}, m)
}
