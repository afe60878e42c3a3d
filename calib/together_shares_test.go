package calib

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTogetherShares(t *testing.T) {
	got, err := TogetherShares([]float64{0, 0.04, 0.08})
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 0.04, 0.08}, got)
	got, err = TogetherShares([]float64{0.06, 0.1, 0.06})
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 0.06, 0.1}, got, "share 0 added, duplicates dropped")
	// A fraction outside [0, 1) is no share: PlanTogether would give the
	// direct path a negative part (1.5) or the staged path one (-0.1).
	for i, bad := range [][]float64{{0.04}, {0, 0.04}, {0.04, 0.04}, nil, {-0.1, 0.05}, {0.05, 1.5}, {0.05, 1}, {0.05, math.NaN()}} {
		_, err := TogetherShares(bad)
		assert.Error(t, err, "case %d: %v", i, bad)
	}
}
