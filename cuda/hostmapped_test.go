package cuda

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// MappedAddr names a byte of the buffer: the offset one past its end is
// no byte of it (a kernel handed that address writes past the
// allocation), and is refused before the device is asked.
func TestMappedAddrRefusesEnd(t *testing.T) {
	var words [2]uint64
	h := &HostBuffer{ptr: unsafe.Pointer(&words[0]), bytes: 16}
	closed := &Device{closed: true} // any driver call would be an error
	for _, off := range []int{-1, 16, 17} {
		_, err := h.MappedAddr(closed, off)
		require.ErrorIs(t, err, ErrOutOfRange, "offset %d", off)
	}
	_, err := h.MappedAddr(closed, 15)
	require.ErrorIs(t, err, ErrFreed) // in range: the closed device answers
}
