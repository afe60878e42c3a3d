package jsondoc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One document is read; anything after it (another document, a stray
// closing bracket, text) is ErrTrailing; strict refuses unknown fields.
func TestDecode(t *testing.T) {
	type doc struct{ A int }
	var d doc
	require.NoError(t, Decode([]byte(` {"A": 3} `+"\n"), &d, true))
	assert.Equal(t, 3, d.A)
	for _, tail := range []string{`{}`, `}`, `]`, `x`, `{"A": 4}`} {
		assert.ErrorIs(t, Decode([]byte(`{"A": 3}`+tail), &d, false), ErrTrailing, "tail %q", tail)
	}
	assert.Error(t, Decode([]byte(`{"A": 3, "B": 1}`), &d, true), "an unknown field, strict")
	assert.NoError(t, Decode([]byte(`{"A": 3, "B": 1}`), &d, false), "an unknown field, not strict")
	assert.Error(t, Decode([]byte(`{"A": `), &d, false), "a truncated document")
}
