package coll

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRoundTrip(t *testing.T) {
	for _, c := range Collectives {
		got, err := ParseCollective(string(c))
		require.NoError(t, err)
		assert.Equal(t, c, got)
	}
	for _, d := range Dtypes {
		got, err := ParseDtype(d.String())
		require.NoError(t, err)
		assert.Equal(t, d, got)
		assert.NotZero(t, d.Size())
	}
	for _, o := range Ops {
		got, err := ParseOp(o.String())
		require.NoError(t, err)
		assert.Equal(t, o, got)
	}
}

func TestParseErrorsNameTheChoices(t *testing.T) {
	_, err := ParseCollective("allgatherv")
	assert.ErrorContains(t, err, "allgather, allreduce")
	_, err = ParseDtype("float128")
	assert.ErrorContains(t, err, "bfloat16")
	_, err = ParseOp("avg")
	assert.ErrorContains(t, err, "bxor")
}

func TestSupports(t *testing.T) {
	assert.True(t, Supports(Sum, Float16))
	assert.False(t, Supports(Bxor, Float32))
	assert.True(t, Supports(Bxor, Uint8))
	assert.False(t, Supports(OpInvalid, Int8))
	assert.False(t, Supports(Sum, DtypeInvalid))
}

func TestReductionOnlyForReducingCollectives(t *testing.T) {
	for _, c := range Collectives {
		d, o := c.Reduction(Float32, Sum)
		if c.Reduces() {
			assert.Equal(t, Float32, d, "%s", c)
			assert.Equal(t, Sum, o, "%s", c)
		} else {
			assert.Equal(t, DtypeInvalid, d, "%s", c)
			assert.Equal(t, OpInvalid, o, "%s", c)
		}
	}
}

// Combine sums rows of bfloat16 and float32 only.
func TestCombineSums(t *testing.T) {
	assert.True(t, CombineSums(Bfloat16))
	assert.True(t, CombineSums(Float32))
	assert.False(t, CombineSums(Float16))
	assert.False(t, CombineSums(Int32))
}
