package ucx

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSizeClasses(t *testing.T) {
	for _, c := range []struct{ n, class int }{
		{1, 0}, {4096, 0}, {4097, 1}, {8192, 1}, {8193, 2}, {32 << 10, 3}, {64 << 10, 4},
	} {
		assert.Equal(t, c.class, sizeClass(c.n), "%d bytes", c.n)
		assert.GreaterOrEqual(t, classBytes(sizeClass(c.n)), c.n)
	}
}

// A small region freed is handed out again, zeroed, with the length asked
// for; a large one is unmapped, and the pool keeps no more than its bound.
func TestAllocReusesSmallRegionsZeroed(t *testing.T) {
	b := Alloc(3000)
	require.Equal(t, 3000, len(b))
	assert.Equal(t, 4096, cap(b))
	for i := range b {
		b[i] = 0xab
	}
	first := unsafe.Pointer(&b[0])
	require.NoError(t, Free(b))
	c := Alloc(100)
	require.Equal(t, 100, len(c))
	assert.Equal(t, first, unsafe.Pointer(&c[0]), "the freed region was not reused")
	assert.True(t, bytes.Equal(make([]byte, cap(c)), c[:cap(c)]), "a reused region must be zeroed")
	require.NoError(t, Free(c))

	big := Alloc(maxPooled + 1)
	assert.Equal(t, maxPooled+1, cap(big), "large regions are mapped at their size")
	require.NoError(t, Free(big))

	held := make([][]byte, maxPerClass+2)
	for i := range held {
		held[i] = Alloc(minPooled)
	}
	for _, h := range held {
		require.NoError(t, Free(h))
	}
	pool.mu.Lock()
	kept := len(pool.free[0])
	pool.mu.Unlock()
	assert.Equal(t, maxPerClass, kept)
}
