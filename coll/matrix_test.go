package coll

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckMatrix(t *testing.T) {
	assert.NoError(t, CheckMatrix([][]int64{{0, 4}, {8, 0}}, 2, 4))
	assert.ErrorContains(t, CheckMatrix([][]int64{{0, 4}}, 2, 4), "1 rows, want 2")
	assert.ErrorContains(t, CheckMatrix([][]int64{{0, 4}, {8}}, 2, 4), "row 1 has 1 entries, want 2")
	assert.ErrorContains(t, CheckMatrix([][]int64{{0, -4}, {8, 0}}, 2, 4), "[0][1] = -4 bytes is negative")
	assert.ErrorContains(t, CheckMatrix([][]int64{{0, 6}, {8, 0}}, 2, 4), "[0][1] = 6 bytes is not a whole number of 4-byte elements")
	assert.NoError(t, CheckMatrix([][]int64{{0, 6}, {8, 0}}, 2, 0), "elem 0: any byte count")
}
