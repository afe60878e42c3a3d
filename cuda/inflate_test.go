package cuda

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every embedded image inflates to what the standard reader gives, plus
// the NUL that PTX needs; a stream whose trailer lies about its size, or
// whose checksum fails, is refused.
func TestInflateImages(t *testing.T) {
	entries, err := kernelImages.ReadDir("kernels")
	require.NoError(t, err)
	for _, e := range entries {
		name := "kernels/" + e.Name()
		gz, err := kernelImages.ReadFile(name)
		require.NoError(t, err)
		z, err := gzip.NewReader(bytes.NewReader(gz))
		require.NoError(t, err)
		want, err := io.ReadAll(z)
		require.NoError(t, err)
		got, err := readImage(name)
		require.NoError(t, err, name)
		assert.Equal(t, append(want, 0), got, name)
	}

	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write([]byte("an image of some length"))
	require.NoError(t, w.Close())
	good := b.Bytes()
	alloc := func(n int) []byte { return make([]byte, n) }
	img, err := inflate(good, alloc)
	require.NoError(t, err)
	assert.Equal(t, "an image of some length\x00", string(img))

	short := bytes.Clone(good) // the trailer says 5 bytes fewer
	binary.LittleEndian.PutUint32(short[len(short)-4:], uint32(len("an image of some length")-5))
	_, err = inflate(short, alloc)
	assert.Error(t, err, "a trailer that understates the size")

	long := bytes.Clone(good)
	binary.LittleEndian.PutUint32(long[len(long)-4:], uint32(len("an image of some length")+5))
	_, err = inflate(long, alloc)
	assert.Error(t, err, "a trailer that overstates the size")

	bad := bytes.Clone(good)
	bad[len(bad)-8] ^= 1 // the CRC
	_, err = inflate(bad, alloc)
	assert.Error(t, err, "a bad checksum")

	_, err = inflate(good, func(int) []byte { return nil })
	assert.Error(t, err, "no memory")
}

// readImage inflates an embedded image, NUL-terminated (PTX must be; a
// cubin ignores it), into Go memory.
func readImage(name string) ([]byte, error) {
	return inflateImage(name, func(n int) []byte { return make([]byte, n) })
}
