package model

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMedian(t *testing.T) {
	v := []float64{3, 1, 2}
	assert.Equal(t, 2.0, Median(v))
	assert.Equal(t, []float64{3, 1, 2}, v, "not modified")
	assert.Equal(t, 2.5, Median([]float64{4, 1, 2, 3}))
	assert.True(t, math.IsNaN(Median(nil)))
}
