package devsync

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEndedWantsEveryBlockOfTheLastKernel(t *testing.T) {
	words := []uint64{7, 7, 6, 7}
	word := func(b int) uint64 { return words[b] }
	assert.False(t, Ended(word, 4, 7), "block 2 still holds the previous call's epoch")
	assert.True(t, Ended(word, 2, 7), "a last kernel of two blocks ended; block 2 belongs to an earlier piece")
	words[2] = 7
	assert.True(t, Ended(word, 4, 7))
	assert.False(t, Ended(word, 4, 8), "the next call has not ended")
	assert.False(t, Ended(word, 0, 7), "no kernel, no end")
	assert.False(t, Ended(func(int) uint64 { return 0 }, 1, FirstEpoch), "fresh words are below every epoch")
}
