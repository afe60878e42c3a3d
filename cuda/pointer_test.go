package cuda

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// PointerInfo classifies what the team layer is handed: device memory
// with its GPU's ordinal, host memory the driver knows (mapped for the
// device) and host memory it does not know, each as the driver says.
func TestPointerInfo(t *testing.T) {
	d := devices(t, 1)[0]
	b, err := d.Alloc(1 << 16)
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Free()) }()
	kind, ord, err := PointerInfo(uintptr(b.Ptr()) + 4096) // inside the allocation
	require.NoError(t, err)
	require.Equal(t, PointerDevice, kind)
	require.Equal(t, d.Ordinal(), ord)

	h, err := d.AllocMappedHost(4096)
	require.NoError(t, err)
	defer func() { require.NoError(t, h.Free()) }()
	hp, err := h.livePtr()
	require.NoError(t, err)
	kind, _, err = PointerInfo(uintptr(hp))
	require.NoError(t, err)
	require.Equal(t, PointerHost, kind)

	plain := make([]byte, 64)
	kind, _, err = PointerInfo(uintptr(unsafe.Pointer(&plain[0])))
	require.NoError(t, err)
	require.Equal(t, PointerHost, kind)
}
