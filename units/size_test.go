package units

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseBytes(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		err  bool
	}{
		{"4096", 4096, false}, {"64MiB", 64 << 20, false}, {"1M", 1 << 20, false},
		{"1k", 1024, false}, {"2GiB", 2 << 30, false}, {"1MB", 1000000, false},
		{"7B", 7, false}, {"0", 0, false},
		{"", 0, true}, {"-1", 0, true}, {"1.5M", 0, true}, {"MiB", 0, true}, {"99999999999T", 0, true},
	}
	for i, c := range cases {
		got, err := ParseBytes(c.in)
		if c.err {
			assert.Error(t, err, "case %d %q", i, c.in)
			continue
		}
		require.NoError(t, err, "case %d %q", i, c.in)
		assert.Equal(t, c.want, got, "case %d %q", i, c.in)
	}
}

func TestParseRange(t *testing.T) {
	got, err := ParseRange("1K:8K")
	require.NoError(t, err)
	assert.Equal(t, []int64{1024, 2048, 4096, 8192}, got)
	got, err = ParseRange("3:20")
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 6, 12, 20}, got)
	got, err = ParseRange("64MiB")
	require.NoError(t, err)
	assert.Equal(t, []int64{64 << 20}, got)
	got, err = ParseRange("1,3,1K:4K,70001")
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 3, 1024, 2048, 4096, 70001}, got, "a list keeps its order")
	for _, bad := range []string{"0:8", "8:4", "a:b", "1:", "1,,2", "1,", "1,8:4"} {
		_, err := ParseRange(bad)
		assert.Error(t, err, bad)
	}
}

func TestFormatBytes(t *testing.T) {
	assert.Equal(t, "64MiB", FormatBytes(64<<20))
	assert.Equal(t, "1000", FormatBytes(1000))
	assert.Equal(t, "3KiB", FormatBytes(3072))
}
