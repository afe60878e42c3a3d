package ucx

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMakeTagRoundTrip(t *testing.T) {
	cases := []struct{ sender, seq, step int }{
		{0, 0, 0},
		{1, 2, 3},
		{MaxTagSender, 0, 0},
		{0, MaxTagSeq, 0},
		{0, 0, MaxTagStep},
		{MaxTagSender, MaxTagSeq, MaxTagStep},
		{12345, 678901 % (MaxTagSeq + 1), 4242424},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			tag, err := MakeTag(c.sender, c.seq, c.step)
			require.NoError(t, err)
			assert.Equal(t, c.sender, tag.Sender(), "case %d sender", i)
			assert.Equal(t, c.seq, tag.Seq(), "case %d seq", i)
			assert.Equal(t, c.step, tag.Step(), "case %d step", i)
		})
	}
}

func TestMakeTagFieldsDoNotOverlap(t *testing.T) {
	// Setting one field to its maximum must leave the others zero.
	s, _ := MakeTag(MaxTagSender, 0, 0)
	q, _ := MakeTag(0, MaxTagSeq, 0)
	p, _ := MakeTag(0, 0, MaxTagStep)
	assert.Zero(t, s&q)
	assert.Zero(t, s&p)
	assert.Zero(t, q&p)
	assert.Equal(t, ^Tag(0), s|q|p, "the three fields cover all 64 bits")
	assert.Equal(t, q|p, MaskAnySender, "MaskAnySender covers sequence and step")
}

func TestMakeTagOverflow(t *testing.T) {
	cases := []struct {
		sender, seq, step int
		want              string
	}{
		{MaxTagSender + 1, 0, 0, "sender"},
		{-1, 0, 0, "sender"},
		{0, MaxTagSeq + 1, 0, "sequence"},
		{0, -1, 0, "sequence"},
		{0, 0, MaxTagStep + 1, "step"},
		{0, 0, -5, "step"},
	}
	for i, c := range cases {
		_, err := MakeTag(c.sender, c.seq, c.step)
		require.Error(t, err, "case %d", i)
		assert.Contains(t, err.Error(), c.want, "case %d", i)
	}
}

func TestMaskAnySenderMatching(t *testing.T) {
	a, _ := MakeTag(3, 17, 2)
	b, _ := MakeTag(9, 17, 2)
	c, _ := MakeTag(3, 18, 2)
	match := func(msg, want, mask Tag) bool { return msg&mask == want&mask }
	assert.True(t, match(b, a, MaskAnySender), "other sender, same seq/step")
	assert.False(t, match(c, a, MaskAnySender), "other sequence")
	assert.False(t, match(b, a, MaskFull), "full mask needs the same sender")
	assert.True(t, match(a, a, MaskFull))
}
